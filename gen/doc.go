// Package gen writes synthetic collections for tests, benchmarks and the
// demo.
//
// Current writes snapshots in the current layout
// (archive/users/<user>/snapshots/<YYYYMMDD>/<domain>/<id>/) with an
// index.jsonl like the ones ArchiveBox 0.9.4 writes and a few small output
// files, and returns a Manifest of what it wrote so a test can compare a
// catalog built from the tree against it.
//
// Each snapshot is derived from the Options and its position alone: the
// same Options give the same bytes, whatever the number of workers. The
// data is deliberately awkward — IPv6 and IDN hosts, ports, query strings,
// fragments, percent escapes, file:// and ftp:// URLs; titles with unicode,
// emoji, quotes, markup and thousands of characters, or none; tags with
// spaces and unicode; failed and skipped results; output files named with
// '%', spaces or unicode; outputs recorded in index.jsonl but missing on
// disk — because that is what real collections hold.
package gen
