// Package layout holds the path rules of an ArchiveBox-compatible data
// directory: where a snapshot or crawl lives, how its domain folder is named,
// which ids and legacy timestamps are valid, and how to join untrusted
// relative paths safely.
//
// Everything here is pure string work except JoinNoSymlinks, which calls
// os.Lstat and os.Readlink. Paths returned by SnapshotDir and CrawlDir are
// slash-separated and relative to the data directory.
//
// Several functions reproduce Python behaviour bit for bit (urllib.parse,
// float(), str.strip(), str.lower()) because ArchiveBox derives folder names
// with them; a folder folio computes must be the folder ArchiveBox wrote.
// The reference is CPython 3.11 with its 2024 security releases
// (3.11.11 / 3.12.8 / 3.13.1); differences are noted where they matter.
package layout
