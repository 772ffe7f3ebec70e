folioText.add(1, []);
