package export

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/folio-archive/folio/archive/catalog"
)

// TestStateDigest checks that a state read back from its file has the
// digest of the state written, and that a change to any field the file
// holds, of the state or of one snapshot, changes the digest: an export
// leaves the file alone only when it would write what is there.
func TestStateDigest(t *testing.T) {
	fresh := func() *state {
		st := &state{Key: 1, Pages: []uint64{2, 3}, Total: 3, ManifestSize: 4, ManifestMTime: 5,
			Catalog: catalog.Generation{Epoch: "e", N: 6}, Select: 7, RowBase: 8, Snaps: map[uint64]snapState{}}
		for i, dir := range []string{"archive/a", "archive/b", "archive/c"} {
			n := int64(10 * (i + 1))
			st.Snaps[hashString(dir)] = snapState{Dir: dir, FP: uint64(n), Own: uint64(n + 1), URL: uint64(n + 2), Sig: uint64(n + 3),
				Off: n + 4, Len: n + 5, Files: n + 6, Bytes: n + 7, Sort: n + 8, Page: uint32(n + 9), Archived: i == 1,
				Folder: uint64(n + 10), CTime: n + 11, Row: n + 12, Paged: i == 2}
		}
		return st
	}
	base := fresh()
	path := filepath.Join(t.TempDir(), "state")
	if err := base.write(path); err != nil {
		t.Fatal(err)
	}
	read, err := readState(path)
	if err != nil || read == nil {
		t.Fatalf("read back: %v, %v", read, err)
	}
	if read.disk != base.digest() || !reflect.DeepEqual(read.Snaps, base.Snaps) {
		t.Fatalf("digest read back %x, written %x; snapshots %+v, written %+v", read.disk, base.digest(), read.Snaps, base.Snaps)
	}
	// A state of the format before Paged: its pages not seen, the rest
	// as it was.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v7, ok := decodeState(append([]byte(stateMagic7), data[len(stateMagic):]...))
	if !ok {
		t.Fatal("a state of format 7 not read")
	}
	for h, ss := range base.Snaps {
		ss.Paged = false
		if v7.Snaps[h] != ss {
			t.Errorf("format 7: %+v, want %+v", v7.Snaps[h], ss)
		}
	}
	// Every field, changed alone.
	changed := func(what string, st *state) {
		t.Helper()
		if st.digest() == base.digest() {
			t.Errorf("a change of %s leaves the digest as it was", what)
		}
	}
	sv := reflect.ValueOf(base).Elem()
	for i := range sv.NumField() {
		f := sv.Type().Field(i)
		if !f.IsExported() || f.Name == "Snaps" {
			continue
		}
		if f.Name == "Catalog" { // its epoch and its count
			for j, name := range []string{"Catalog.Epoch", "Catalog.N"} {
				st := fresh()
				bump(t, reflect.ValueOf(st).Elem().Field(i).Field(j), name)
				changed(name, st)
			}
			continue
		}
		st := fresh()
		bump(t, reflect.ValueOf(st).Elem().Field(i), f.Name)
		changed(f.Name, st)
	}
	h := hashString("archive/b")
	for i := range reflect.TypeFor[snapState]().NumField() {
		f := reflect.TypeFor[snapState]().Field(i)
		if f.Name == "Dir" {
			continue // the map's key stands for it
		}
		st := fresh()
		ss := st.Snaps[h]
		bump(t, reflect.ValueOf(&ss).Elem().Field(i), f.Name)
		st.Snaps[h] = ss
		changed("a snapshot's "+f.Name, st)
	}
	st := fresh()
	delete(st.Snaps, h)
	changed("a snapshot gone", st)
}

// bump changes v, a field of a state, to another value.
func bump(t *testing.T, v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Uint64, reflect.Uint32:
		v.SetUint(v.Uint() + 1)
	case reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Slice:
		v.Index(0).SetUint(v.Index(0).Uint() + 1)
	default:
		t.Fatalf("field %s of kind %s: teach bump to change it", name, v.Kind())
	}
}
