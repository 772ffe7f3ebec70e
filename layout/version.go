package layout

// Filesystem layout versions (the fs_version column of a snapshot).
const (
	// Current is the layout version folio writes:
	// archive/users/<user>/snapshots/<YYYYMMDD>/<domain>/<32-hex id>.
	Current = "0.9.4"
)

// nextFSVersion is the declared migration chain. 0.7.0, 0.8.0 and 0.8.5 all
// use archive/<timestamp>; 0.9.0-0.9.3 use the users/ tree with a dashed id.
var nextFSVersion = map[string]string{
	"0.7.0": "0.9.0",
	"0.8.0": "0.9.0",
	"0.8.5": "0.9.0",
	"0.9.0": "0.9.4",
	"0.9.1": "0.9.4",
	"0.9.2": "0.9.4",
	"0.9.3": "0.9.4",
}

// NextFSVersion returns the version one migration hop after v. It reports
// false when v has no declared hop: Current itself, and unknown values such
// as "0.6.0" or "1.0.0", for which a migration is needed (v != Current) but
// impossible.
func NextFSVersion(v string) (string, bool) {
	next, ok := nextFSVersion[v]
	return next, ok
}

// IsLegacyFSVersion reports whether snapshots of version v live in
// archive/<timestamp> (0.7.0, 0.8.0, 0.8.5). Every other value, known or not,
// resolves to the users/ layout.
func IsLegacyFSVersion(v string) bool {
	return v == "0.7.0" || v == "0.8.0" || v == "0.8.5"
}

// MigrationNeeded reports whether a snapshot at version v is not at Current.
func MigrationNeeded(v string) bool { return v != Current }
