folioSearch.add(1, []);
