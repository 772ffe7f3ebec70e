package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// JournalFile is the migration journal, relative to the data directory.
const JournalFile = ".folio/migrate.journal"

// Journal steps, in the order one snapshot goes through them.
const (
	stepPlanned  = "planned"  // about to move src to dst (durable before anything happens)
	stepCopied   = "copied"   // dst holds src's tree (renamed or copied)
	stepVerified = "verified" // dst verified against src
	stepIndexed  = "indexed"  // dst/index.jsonl written
	stepDeleting = "deleting" // about to delete the verified src (durable before the first unlink)
	stepDeleted  = "deleted"  // src is gone
	stepDone     = "done"     // the snapshot is finished (crawl link too)
	stepFailed   = "failed"   // aborted; src is intact, dst as it was or holding identical copies
)

// Modes of a journal treeEntry.
const (
	modeRename  = "rename"  // src renamed to dst
	modeCopy    = "copy"    // src copied into dst (dst new or merged)
	modeCreate  = "create"  // no src: dst created with an index.jsonl
	modeIndex   = "index"   // src is dst: only index.jsonl written
	modeInvalid = "invalid" // src moved to invalid/
	modeCrawl   = "crawl"   // dashed crawl folder renamed
)

// jrecord is one line of the journal.
type jrecord struct {
	Step string `json:"step"`
	Src  string `json:"src"`
	Dst  string `json:"dst,omitempty"`
	Mode string `json:"mode,omitempty"`
	// Index is the index.jsonl a rename will leave in dst, so a crash
	// between the rename and the index write can be finished.
	Index []byte `json:"index,omitempty"`
	// Fresh: dst did not exist before this move, so undoing a copy that
	// did not finish removes dst as a whole.
	Fresh bool `json:"fresh,omitempty"`
	// Link and LinkTo are the crawl symlink to make once the move is done.
	Link   string `json:"link,omitempty"`
	LinkTo string `json:"link_to,omitempty"`
	Err    string `json:"err,omitempty"`
}

// journal appends records to .folio/migrate.journal. Every record is one
// write(2), so a killed process loses none it returned from; records that
// must survive power loss as well are fsynced, concurrent ones sharing one
// fsync.
type journal struct {
	mu    sync.Mutex
	f     *os.File
	path  string
	group *syncGroup
	// sinceSync counts records written since the last fsync; a batch of
	// batch records is fsynced even when none asked for it.
	sinceSync int
	batch     int
}

// openJournal opens (creating) the journal at path and returns the
// records already in it. A torn last line (a crash in mid-write) is
// ignored; any other unreadable line is an error naming the file.
func openJournal(path string, batch int) (*journal, []jrecord, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read journal %s: %w", path, err)
	}
	recs, err := parseJournal(data)
	if err != nil {
		return nil, nil, fmt.Errorf("read journal %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// Terminate the torn line so the next jrecord starts clean.
		if _, err := f.Write([]byte("\n")); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("write journal %s: %w", path, err)
		}
	}
	if batch <= 0 {
		batch = 500
	}
	return &journal{f: f, path: path, group: newSyncGroup(), batch: batch}, recs, nil
}

// parseJournal decodes the journal's lines. A line that does not decode
// can only be a write torn by a crash (each record is one write), so it is
// skipped: the jrecord it would have held was not acted on.
func parseJournal(data []byte) ([]jrecord, error) {
	var recs []jrecord
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var r jrecord
		if json.Unmarshal(line, &r) != nil || r.Step == "" {
			continue
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// append writes r; with durable set it returns only once r is on stable
// storage.
func (j *journal) append(r jrecord, durable bool) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	j.mu.Lock()
	_, err = j.f.Write(line)
	j.sinceSync++
	full := j.sinceSync >= j.batch
	j.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write journal %s: %w", j.path, err)
	}
	if durable || full {
		return j.sync()
	}
	return nil
}

func (j *journal) sync() error {
	return j.group.do(func() error {
		j.mu.Lock()
		j.sinceSync = 0
		j.mu.Unlock()
		if err := j.f.Sync(); err != nil {
			return fmt.Errorf("sync journal %s: %w", j.path, err)
		}
		return nil
	})
}

// close syncs and closes the journal.
func (j *journal) close() error {
	if j == nil || j.f == nil {
		return nil
	}
	err := j.f.Sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	return err
}

// clear empties the journal once nothing in it is pending.
func (j *journal) clear() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("truncate journal %s: %w", j.path, err)
	}
	return j.f.Sync()
}

// pending returns, per source, the last jrecord of every treeEntry that is not
// finished (done or failed), in journal order.
func pendingRecords(recs []jrecord) []jrecord {
	last := map[string]int{}
	var order []string
	for i, r := range recs {
		if _, ok := last[r.Src]; !ok {
			order = append(order, r.Src)
		}
		last[r.Src] = i
	}
	var out []jrecord
	for _, src := range order {
		r := recs[last[src]]
		if r.Step == stepDone || r.Step == stepFailed {
			continue
		}
		// The index bytes and mode live on the planned jrecord.
		for i := last[src]; i >= 0; i-- {
			if recs[i].Src == src && recs[i].Step == stepPlanned {
				r.Index = recs[i].Index
				r.Mode = recs[i].Mode
				r.Dst = recs[i].Dst
				r.Link, r.LinkTo = recs[i].Link, recs[i].LinkTo
				r.Fresh = recs[i].Fresh
				break
			}
		}
		out = append(out, r)
	}
	return out
}
