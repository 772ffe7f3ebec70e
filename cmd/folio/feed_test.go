package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// addedURLs returns the URLs of a collection's snapshots, sorted, and
// their titles and tags by URL.
func addedURLs(t *testing.T, dir string) ([]string, map[string]string, map[string][]string) {
	t.Helper()
	var urls []string
	titles, tags := map[string]string{}, map[string][]string{}
	for _, s := range snapshots(t, dir) {
		urls = append(urls, s.snap.URL)
		titles[s.snap.URL], tags[s.snap.URL] = s.snap.Title, s.snap.Tags
	}
	slices.Sort(urls)
	return urls, titles, tags
}

// runFolioStdin runs the binary with stdin from the given file.
func runFolioStdin(t *testing.T, stdin *os.File, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(folioBin(t), args...)
	cmd.Env = append(os.Environ(), "FOLIO_DATA_DIR=")
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ArchiveBox's ways of feeding add: a pipe or a redirected file on stdin
// without '-', and a file named as an argument.
func TestAddReadsPipedStdinAndFileArguments(t *testing.T) {
	t.Run("pipe", func(t *testing.T) {
		dir := newCollection(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			w.WriteString("https://pipe.example/\n")
			w.Close()
		}()
		out, code := runFolioStdin(t, r, "add", "-D", dir, "--index-only")
		r.Close()
		if urls, _, _ := addedURLs(t, dir); code != 0 || !reflect.DeepEqual(urls, []string{"https://pipe.example/"}) {
			t.Fatalf("echo URL | folio add: exit %d, snapshots %q\n%s", code, urls, out)
		}
	})
	t.Run("redirect", func(t *testing.T) {
		dir := newCollection(t)
		f, err := os.Open(writeTemp(t, "urls.txt", "https://a.example/\nhttps://b.example/\n"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out, code := runFolioStdin(t, f, "add", "-D", dir, "--index-only")
		if urls, _, _ := addedURLs(t, dir); code != 0 || !reflect.DeepEqual(urls, []string{"https://a.example/", "https://b.example/"}) {
			t.Fatalf("folio add < urls.txt: exit %d, snapshots %q\n%s", code, urls, out)
		}
	})
	t.Run("file argument", func(t *testing.T) {
		dir := newCollection(t)
		bookmarks := writeTemp(t, "bookmarks.html", "<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n"+
			"<DT><A HREF=\"https://keepers.example/\" ADD_DATE=\"1710754200\" TAGS=\"lighthouses\">Keepers of the Light</A>\n</DL>\n")
		_, stderr, code := runFolio(t, "add", "-D", dir, "--index-only", bookmarks, "https://arg.example/")
		urls, titles, tags := addedURLs(t, dir)
		if code != 0 || !reflect.DeepEqual(urls, []string{"https://arg.example/", "https://keepers.example/"}) {
			t.Fatalf("folio add bookmarks.html URL: exit %d, snapshots %q\n%s", code, urls, stderr)
		}
		if titles["https://keepers.example/"] != "Keepers of the Light" || !slices.Contains(tags["https://keepers.example/"], "lighthouses") {
			t.Errorf("bookmark read without its title and tags: %q %q", titles, tags)
		}
	})
	t.Run("resume reads no stdin", func(t *testing.T) {
		// A pipe no one closes (ssh, a parent script) must not hold up
		// add --resume, which needs no input.
		dir := newCollection(t)
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		defer r.Close()
		done := make(chan int, 1)
		go func() {
			_, code := runFolioStdin(t, r, "add", "-D", dir, "--resume", "--plugins", "title")
			done <- code
		}()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("add --resume with nothing queued: exit %d", code)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("add --resume waited for stdin")
		}
	})
}

// Free text, generic HTML, Pocket's HTML and CSV exports and Pinboard's
// JSON export are detected and yield their URLs, titles and tags.
func TestAddDetectsExports(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       []string
		title      string // of want[0]
		tag        string // of want[0]
	}{
		{"notes.txt", "Reading list for Monday\nsee https://a.example/post. and (https://b.example/wiki/x)\nnothing here\n",
			[]string{"https://a.example/post", "https://b.example/wiki/x"}, "", ""},
		{"page.html", "<html><body><p>Links: <a href=\"https://a.example/\">A</a> <a href=\"/local\">local</a> <a href=\"#top\">top</a></p></body></html>\n",
			[]string{"https://a.example/"}, "A", ""},
		{"ril_export.html", "<!DOCTYPE html>\n<html><head><title>Pocket Export</title></head><body><h1>Unread</h1><ul>\n" +
			"<li><a href=\"https://a.example/\" time_added=\"1710754200\" tags=\"fog\">Fog</a></li>\n</ul></body></html>\n",
			[]string{"https://a.example/"}, "Fog", "fog"},
		{"part_000000.csv", "title,url,time_added,cursor,tags,status\n\"Horns, bells\",https://a.example/,1712081100,x,fog|sound,unread\n",
			[]string{"https://a.example/"}, "Horns, bells", "sound"},
		{"pinboard.json", `[{"href":"https://a.example/","description":"Keepers","extended":"","time":"2024-03-18T09:30:00Z","tags":"lights fog"},` +
			`{"href":"https://b.example/","description":"B","time":"2024-03-19T09:30:00Z","tags":""}]`,
			[]string{"https://a.example/", "https://b.example/"}, "Keepers", "lights"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := newCollection(t)
			_, stderr, code := runFolio(t, "add", "-D", dir, "--index-only", writeTemp(t, c.name, c.data))
			urls, titles, tags := addedURLs(t, dir)
			if code != 0 || !reflect.DeepEqual(urls, c.want) {
				t.Fatalf("exit %d, snapshots %q, want %q\n%s", code, urls, c.want, stderr)
			}
			if titles[c.want[0]] != c.title || (c.tag != "" && !slices.Contains(tags[c.want[0]], c.tag)) {
				t.Errorf("%s: title %q tags %q, want %q and %q", c.want[0], titles[c.want[0]], tags[c.want[0]], c.title, c.tag)
			}
			if strings.Contains(stderr, "line ") {
				t.Errorf("items reported as invalid:\n%s", stderr)
			}
		})
	}
}
