package plugins

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A Chromium profile (user data dir) lives in $TMPDIR, which no
// collection lock covers, as folio-chromium-<random>/. Its owner holds an
// flock on profileLock inside it for as long as it uses it; the kernel
// drops the flock when the process dies, however it dies. So a profile
// whose flock can be taken is provably abandoned, by a folio that was
// killed, and the next browser start removes it. A profile without the
// lock file (still being made, or made by another program) is left alone.

// profilePrefix begins the name of every profile folder folio makes.
const profilePrefix = "folio-chromium-"

// profileLock is the file inside a profile whose flock marks it in use.
const profileLock = ".folio-profile.lock"

// newProfile removes the abandoned profiles in $TMPDIR, then makes a
// profile folder and takes its lock.
func newProfile() (string, *os.File, error) {
	RemoveStaleProfiles()
	dir, err := os.MkdirTemp("", profilePrefix)
	if err != nil {
		return "", nil, fmt.Errorf("create a Chromium profile folder: %w", err)
	}
	// The lock file appears under its name already locked, so that no
	// other folio ever sees it unlocked while this one lives.
	tmp := filepath.Join(dir, profileLock+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dir, profileLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("lock the Chromium profile folder %s: %w", dir, err)
	}
	return dir, f, nil
}

// RemoveStaleProfiles removes the profile folders in $TMPDIR whose lock
// no living process holds (see removeStaleProfiles): every add does, even
// one that starts no browser.
func RemoveStaleProfiles() { removeStaleProfiles(os.TempDir()) }

// removeStaleProfiles removes the profile folders in tmp whose lock no
// living process holds. It only ever removes folders of folio's name,
// owned by this user, that hold the lock file; what it cannot remove it
// leaves (another user's, or one being made).
func removeStaleProfiles(tmp string) {
	d, err := os.Open(tmp)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		if !strings.HasPrefix(name, profilePrefix) {
			continue
		}
		dir := filepath.Join(tmp, name)
		var st unix.Stat_t
		if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
			continue
		}
		if stale, err := abandoned(dir); err == nil && stale {
			removeProfile(dir)
		}
	}
}

// abandoned reports whether the profile dir has a lock file and no
// process holds its flock. Only the folder's maker ever locks it, before
// the lock file has its name, so once unlocked it stays unlocked.
func abandoned(dir string) (bool, error) {
	fd, err := unix.Open(filepath.Join(dir, profileLock), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// removeProfile removes an abandoned profile with its lock file last: a
// Chromium its dead folio left still shutting down may write there a
// moment longer, and a profile that could not be emptied keeps its lock
// file, so the next add tries again.
func removeProfile(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() == profileLock {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return
		}
	}
	if os.Remove(filepath.Join(dir, profileLock)) == nil {
		os.Remove(dir)
	}
}
