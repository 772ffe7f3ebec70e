package archive

import (
	"path"
	"sort"
	"strings"
)

// mimetypes maps extensions to the media types ArchiveBox records in
// output_files (Python's mimetypes defaults, plus application/warc). It is
// a fixed table, not the system's mime.types, so every machine writes the
// same records.
var mimetypes = map[string]string{
	"html": "text/html", "htm": "text/html", "shtml": "text/html", "xhtml": "application/xhtml+xml",
	"mhtml": "message/rfc822", "mht": "message/rfc822",
	"txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
	"css": "text/css", "csv": "text/csv", "tsv": "text/tab-separated-values", "xml": "text/xml",
	"js": "text/javascript", "mjs": "text/javascript", "json": "application/json",
	"pdf": "application/pdf", "warc": "application/warc", "wacz": "application/zip", "zip": "application/zip",
	"tar": "application/x-tar", "gz": "application/gzip", "tgz": "application/gzip",
	"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
	"svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon", "bmp": "image/bmp", "avif": "image/avif",
	"mp4": "video/mp4", "m4v": "video/mp4", "webm": "video/webm", "mkv": "video/x-matroska", "mov": "video/quicktime",
	"mp3": "audio/mpeg", "m4a": "audio/mp4", "opus": "audio/ogg", "ogg": "audio/ogg", "wav": "audio/x-wav", "flac": "audio/flac",
	"woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
}

// Mimetype returns the media type of a file name by its extension: a .gz
// file has the type of the name inside it when that is known (else
// application/gzip), and an unknown extension application/octet-stream.
func Mimetype(name string) string {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	if ext == "gz" {
		if inner := strings.TrimSuffix(name, name[len(name)-3:]); path.Ext(inner) != "" {
			if t := Mimetype(inner); t != octetStream {
				return t
			}
		}
	}
	if t, ok := mimetypes[ext]; ok {
		return t
	}
	return octetStream
}

const octetStream = "application/octet-stream"

// NewOutputFile describes one file of a result's output_files: rel is its
// path below the plugin folder.
func NewOutputFile(rel string, size int64) OutputFile {
	return OutputFile{Path: rel, Size: size, Mimetype: Mimetype(rel), Extension: strings.TrimPrefix(path.Ext(rel), ".")}
}

// MimetypesBySize is a result's output_mimetypes: the media types of its
// files by total bytes, largest first (ties by name), comma separated.
func MimetypesBySize(files []OutputFile) string {
	bytes := map[string]int64{}
	for _, f := range files {
		bytes[f.Mimetype] += f.Size
	}
	types := make([]string, 0, len(bytes))
	for t := range bytes {
		types = append(types, t)
	}
	sort.Slice(types, func(a, b int) bool {
		if bytes[types[a]] != bytes[types[b]] {
			return bytes[types[a]] > bytes[types[b]]
		}
		return types[a] < types[b]
	})
	return strings.Join(types, ",")
}
