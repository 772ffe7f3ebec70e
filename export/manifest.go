package export

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/folio-archive/folio/archive"
	"github.com/folio-archive/folio/layout"
)

// The root index.jsonl holds one record per exported snapshot in the form
// of ArchiveBox's Snapshot.to_dict(extended=True, static_export=True)
// dumped with sort_keys=True: "TYPE" (no lowercase "type"), list-valued
// tags, and a portable archive_path/archive_url. output_dir and link_dir,
// which ArchiveBox fills with absolute paths of the machine that exported,
// hold the same relative path as archive_path so a published manifest
// works anywhere and does not reveal the exporter's file system.

// manifestKeys is the record's key set in sorted order.
var manifestKeys = func() []string {
	k := []string{"TYPE", "id", "crawl_id", "url", "timestamp", "title", "tags", "downloaded_at",
		"bookmarked_at", "created_at", "modified_at", "retry_at", "depth", "status", "fs_version",
		"domain", "scheme", "base_url", "path", "basename", "extension", "is_static",
		"is_archived", "archive_path", "archive_url", "output_dir", "link_dir", "archive_size",
		"output_size", "bookmarked_date", "downloaded_datestr", "num_outputs", "num_failures"}
	sort.Strings(k)
	return k
}()

// staticExtensions are ArchiveBox's STATICFILE_EXTENSIONS: URLs ending in
// them are files, not pages (is_static).
var staticExtensions = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`gif jpeg jpg png tif tiff wbmp ico jng bmp svg svgz webp ps eps ai
		mp3 mp4 m4a mpeg mpg mkv mov webm m4v flv wmv avi ogg ts m3u8 pdf txt rtf rtfd doc docx ppt pptx
		xls xlsx atom rss css js json dmg iso img rar war hqx zip gz bz2 7z`) {
		staticExtensions[e] = true
	}
}

// urlParts splits a URL the way ArchiveBox's scheme/path/basename/extension
// helpers see it (urllib.parse.urlparse).
type urlParts struct {
	scheme, netloc, path, basename, extension string
}

func splitURL(u string) urlParts {
	var p urlParts
	rest := u
	if i := strings.Index(u, ":"); i > 0 && validScheme(u[:i]) {
		p.scheme = strings.ToLower(u[:i])
		rest = u[i+1:]
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		p.netloc, rest = rest[:end], rest[end:]
	}
	if end := strings.IndexAny(rest, "?#"); end >= 0 {
		rest = rest[:end]
	}
	p.path = rest
	p.basename = rest[strings.LastIndex(rest, "/")+1:]
	if i := strings.LastIndex(p.basename, "."); i >= 0 {
		p.extension = strings.ToLower(p.basename[i+1:])
	}
	if n := layout.Netloc(u); n != "" || p.netloc == "" {
		p.netloc = n
	}
	return p
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// manifestRecord is what one root index.jsonl line is made of.
type manifestRecord struct {
	Dir         string
	Snapshot    archive.Snapshot
	Modified    time.Time
	IsArchived  bool
	NumOutputs  int
	NumFailures int
}

// appendManifest appends one record and its "\n" in Python's
// json.dumps(sort_keys=True, ensure_ascii=True) style.
func appendManifest(b []byte, m *manifestRecord) []byte {
	s := &m.Snapshot
	u := splitURL(s.URL)
	base := ""
	if u.scheme != "" {
		base = u.scheme + "://" + u.netloc
	}
	b = append(b, '{')
	for i, k := range manifestKeys {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = archive.AppendPyString(b, k)
		b = append(b, ": "...)
		switch k {
		case "TYPE":
			b = archive.AppendPyString(b, "core.models.Snapshot")
		case "id":
			b = archive.AppendPyString(b, s.ID)
		case "crawl_id":
			b = appendOptString(b, s.CrawlID)
		case "url":
			b = archive.AppendPyString(b, s.URL)
		case "timestamp":
			b = archive.AppendPyString(b, s.Timestamp)
		case "title":
			b = appendOptString(b, s.Title)
		case "tags":
			b = append(b, '[')
			for j, t := range archive.NormalizeTags(s.Tags) {
				if j > 0 {
					b = append(b, ", "...)
				}
				b = archive.AppendPyString(b, t)
			}
			b = append(b, ']')
		case "downloaded_at", "retry_at", "downloaded_datestr":
			b = append(b, "null"...)
		case "bookmarked_at":
			b = appendTime(b, s.BookmarkedAt)
		case "created_at":
			b = appendTime(b, s.CreatedAt)
		case "modified_at":
			b = appendTime(b, m.Modified)
		case "depth":
			b = strconv.AppendInt(b, int64(s.Depth), 10)
		case "status":
			b = archive.AppendPyString(b, s.Status)
		case "fs_version":
			b = archive.AppendPyString(b, s.FSVersion)
		case "domain":
			b = archive.AppendPyString(b, u.netloc)
		case "scheme":
			b = archive.AppendPyString(b, u.scheme)
		case "base_url":
			b = archive.AppendPyString(b, base)
		case "path":
			b = archive.AppendPyString(b, u.path)
		case "basename":
			b = archive.AppendPyString(b, u.basename)
		case "extension":
			b = archive.AppendPyString(b, u.extension)
		case "is_static":
			b = strconv.AppendBool(b, staticExtensions[u.extension])
		case "is_archived":
			b = strconv.AppendBool(b, m.IsArchived)
		case "archive_path", "output_dir", "link_dir":
			b = archive.AppendPyString(b, m.Dir)
		case "archive_url":
			b = archive.AppendPyString(b, "./"+m.Dir+"/index.html")
		case "archive_size", "output_size":
			b = strconv.AppendInt(b, s.ArchiveSize, 10)
		case "bookmarked_date":
			switch {
			case !s.BookmarkedAt.IsZero():
				b = archive.AppendPyString(b, s.BookmarkedAt.UTC().Format("2006-01-02 15:04:05"))
			case s.Timestamp != "":
				b = archive.AppendPyString(b, s.Timestamp)
			default:
				b = append(b, "null"...)
			}
		case "num_outputs":
			b = strconv.AppendInt(b, int64(m.NumOutputs), 10)
		case "num_failures":
			b = strconv.AppendInt(b, int64(m.NumFailures), 10)
		}
	}
	return append(b, "}\n"...)
}

func appendOptString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return archive.AppendPyString(b, s)
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	return archive.AppendPyString(b, archive.IsoTime(t))
}
