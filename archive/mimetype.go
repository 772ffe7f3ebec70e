package archive

import (
	"sort"
	"strings"
)

// pyTypes is Python 3.12's built-in mimetypes table (Lib/mimetypes.py
// _types_map_default, the strict types), which ArchiveBox's output_files
// come from: abx-dl asks mimetypes.guess_type(path, strict=False). It is
// the built-in table, not the system's mime.types that Python also reads
// where one exists, so every machine writes the same records.
var pyTypes = map[string]string{
	"json":        "application/json",
	"webmanifest": "application/manifest+json",
	"doc":         "application/msword", "dot": "application/msword", "wiz": "application/msword",
	"nq":  "application/n-quads",
	"nt":  "application/n-triples",
	"bin": "application/octet-stream", "a": "application/octet-stream", "dll": "application/octet-stream", "exe": "application/octet-stream", "o": "application/octet-stream", "obj": "application/octet-stream", "so": "application/octet-stream",
	"oda": "application/oda",
	"pdf": "application/pdf",
	"p7c": "application/pkcs7-mime",
	"ps":  "application/postscript", "ai": "application/postscript", "eps": "application/postscript",
	"trig": "application/trig",
	"m3u":  "application/vnd.apple.mpegurl", "m3u8": "application/vnd.apple.mpegurl",
	"xls": "application/vnd.ms-excel", "xlb": "application/vnd.ms-excel",
	"ppt": "application/vnd.ms-powerpoint", "pot": "application/vnd.ms-powerpoint", "ppa": "application/vnd.ms-powerpoint", "pps": "application/vnd.ms-powerpoint", "pwz": "application/vnd.ms-powerpoint",
	"wasm":  "application/wasm",
	"bcpio": "application/x-bcpio",
	"cpio":  "application/x-cpio",
	"csh":   "application/x-csh",
	"dvi":   "application/x-dvi",
	"gtar":  "application/x-gtar",
	"hdf":   "application/x-hdf",
	"h5":    "application/x-hdf5",
	"latex": "application/x-latex",
	"mif":   "application/x-mif",
	"cdf":   "application/x-netcdf", "nc": "application/x-netcdf",
	"p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
	"ram": "application/x-pn-realaudio",
	"pyc": "application/x-python-code", "pyo": "application/x-python-code",
	"sh":      "application/x-sh",
	"shar":    "application/x-shar",
	"swf":     "application/x-shockwave-flash",
	"sv4cpio": "application/x-sv4cpio",
	"sv4crc":  "application/x-sv4crc",
	"tar":     "application/x-tar",
	"tcl":     "application/x-tcl",
	"tex":     "application/x-tex",
	"texi":    "application/x-texinfo", "texinfo": "application/x-texinfo",
	"roff": "application/x-troff", "t": "application/x-troff", "tr": "application/x-troff",
	"man":   "application/x-troff-man",
	"me":    "application/x-troff-me",
	"ms":    "application/x-troff-ms",
	"ustar": "application/x-ustar",
	"src":   "application/x-wais-source",
	"xsl":   "application/xml", "rdf": "application/xml", "wsdl": "application/xml", "xpdl": "application/xml",
	"zip": "application/zip",
	"3gp": "audio/3gpp", "3gpp": "audio/3gpp",
	"3g2": "audio/3gpp2", "3gpp2": "audio/3gpp2",
	"aac": "audio/aac", "adts": "audio/aac", "loas": "audio/aac", "ass": "audio/aac",
	"au": "audio/basic", "snd": "audio/basic",
	"mp3": "audio/mpeg", "mp2": "audio/mpeg",
	"opus": "audio/opus",
	"aif":  "audio/x-aiff", "aifc": "audio/x-aiff", "aiff": "audio/x-aiff",
	"ra":   "audio/x-pn-realaudio",
	"wav":  "audio/x-wav",
	"avif": "image/avif",
	"bmp":  "image/bmp",
	"gif":  "image/gif",
	"heic": "image/heic",
	"heif": "image/heif",
	"ief":  "image/ief",
	"jpg":  "image/jpeg", "jpe": "image/jpeg", "jpeg": "image/jpeg",
	"png":  "image/png",
	"svg":  "image/svg+xml",
	"tiff": "image/tiff", "tif": "image/tiff",
	"ico": "image/vnd.microsoft.icon",
	"ras": "image/x-cmu-raster",
	"pnm": "image/x-portable-anymap",
	"pbm": "image/x-portable-bitmap",
	"pgm": "image/x-portable-graymap",
	"ppm": "image/x-portable-pixmap",
	"rgb": "image/x-rgb",
	"xbm": "image/x-xbitmap",
	"xpm": "image/x-xpixmap",
	"xwd": "image/x-xwindowdump",
	"eml": "message/rfc822", "mht": "message/rfc822", "mhtml": "message/rfc822", "nws": "message/rfc822",
	"css":  "text/css",
	"csv":  "text/csv",
	"html": "text/html", "htm": "text/html",
	"js": "text/javascript", "mjs": "text/javascript",
	"n3":  "text/n3",
	"txt": "text/plain", "bat": "text/plain", "c": "text/plain", "h": "text/plain", "ksh": "text/plain", "pl": "text/plain", "srt": "text/plain",
	"rtx": "text/richtext",
	"tsv": "text/tab-separated-values",
	"vtt": "text/vtt",
	"py":  "text/x-python",
	"etx": "text/x-setext",
	"sgm": "text/x-sgml", "sgml": "text/x-sgml",
	"vcf":  "text/x-vcard",
	"xml":  "text/xml",
	"mp4":  "video/mp4",
	"mpeg": "video/mpeg", "m1v": "video/mpeg", "mpa": "video/mpeg", "mpe": "video/mpeg", "mpg": "video/mpeg",
	"mov": "video/quicktime", "qt": "video/quicktime",
	"webm":  "video/webm",
	"avi":   "video/x-msvideo",
	"movie": "video/x-sgi-movie",
	// abx-dl adds application/warc for .warc.
	"warc": "application/warc",
}

// pyCommonTypes are Python's non-strict types (_common_types_default),
// which guess_type(strict=False) consults after the strict ones.
var pyCommonTypes = map[string]string{
	"rtf": "application/rtf", "midi": "audio/midi", "mid": "audio/midi", "pict": "image/pict", "pct": "image/pict", "pic": "image/pict", "webp": "image/webp", "xul": "text/xul",
}

// pySuffixes are Python's suffix_map: a suffix that stands for two.
var pySuffixes = map[string]string{"svgz": ".svg.gz", "tgz": ".tar.gz", "taz": ".tar.gz", "tz": ".tar.gz", "tbz2": ".tar.bz2", "txz": ".tar.xz"}

// pyEncodings are Python's encodings_map (case-sensitive, as there).
var pyEncodings = map[string]string{"gz": "gzip", "Z": "compress", "bz2": "bzip2", "xz": "xz", "br": "br"}

// Mimetype returns the media type ArchiveBox records for a file name, by
// abx-dl's guess_mimetype over Python 3.12's built-in table: the type of
// the name (a .tgz is a tar, a .warc.gz a WARC: the compression is an
// encoding, not the type), else application/gzip for a gzip-compressed
// file of unknown type, else application/octet-stream.
func Mimetype(name string) string {
	base, ext := pySplitext(name)
	for {
		s, ok := pySuffixes[strings.ToLower(ext)]
		if !ok {
			break
		}
		base, ext = pySplitext(base + s)
	}
	encoding := pyEncodings[ext]
	if encoding != "" {
		base, ext = pySplitext(base)
	}
	ext = strings.ToLower(ext)
	if t, ok := pyTypes[ext]; ok {
		return t
	}
	if t, ok := pyCommonTypes[ext]; ok {
		return t
	}
	if encoding == "gzip" {
		return "application/gzip"
	}
	return octetStream
}

// pySplitext is Python's posixpath.splitext, the extension without its
// dot: leading dots of the last element do not start an extension.
func pySplitext(name string) (base, ext string) {
	slash := strings.LastIndexByte(name, '/')
	dot := strings.LastIndexByte(name, '.')
	if dot <= slash+1 || strings.Trim(name[slash+1:dot], ".") == "" {
		return name, ""
	}
	return name[:dot], name[dot+1:]
}

// pySuffix is abx-dl's extension of a file: Python's Path.suffix,
// lowercased, without its dot.
func pySuffix(name string) string {
	name = name[strings.LastIndexByte(name, '/')+1:]
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		return strings.ToLower(name[i+1:])
	}
	return ""
}

// webTypes are the types of web resources Python's table lacks, for
// guessing what a resource served without a usable Content-Type is.
var webTypes = map[string]string{
	"woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf", "eot": "application/vnd.ms-fontobject",
	"ogg": "audio/ogg", "oga": "audio/ogg", "ogv": "video/ogg", "m4a": "audio/mp4", "m4v": "video/mp4", "flac": "audio/flac",
	"mkv": "video/x-matroska", "md": "text/markdown", "xhtml": "application/xhtml+xml", "shtml": "text/html",
}

// WebType guesses a web resource's media type by its name: Mimetype,
// else the common web types Python's table lacks (fonts, Ogg media),
// else application/octet-stream.
func WebType(name string) string {
	if t := Mimetype(name); t != octetStream {
		return t
	}
	_, ext := pySplitext(name)
	if t, ok := webTypes[strings.ToLower(ext)]; ok {
		return t
	}
	return octetStream
}

const octetStream = "application/octet-stream"

// NewOutputFile describes one file of a result's output_files: rel is its
// path below the plugin folder.
func NewOutputFile(rel string, size int64) OutputFile {
	return OutputFile{Path: rel, Size: size, Mimetype: Mimetype(rel), Extension: pySuffix(rel)}
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
