package archive

import (
	"strconv"
	"strings"
	"time"
)

// TypeCrawl is the type of the Crawl record in a snapshot's index.jsonl.
const TypeCrawl = "Crawl"

// Crawl is the Crawl record folio writes into the index.jsonl of every
// snapshot of a crawl: the capture run (or migration) that made it. Its
// fields are the Crawl record of ArchiveBox's JSONL vocabulary plus the
// created_by that the 0.9.4 rescan importer reads to give a missing crawl
// its owner (formats spec §2.4, §3.8). Every snapshot of one crawl carries
// the same record, so the importer gets the same crawl whichever snapshot
// it reads first.
type Crawl struct {
	ID        string // 32 lowercase hex digits, the snapshots' crawl_id
	URLs      string // the input, one URL a line ("#" lines are comments)
	Status    string // queued, started, sealed
	MaxDepth  int
	MaxURLs   int
	MaxSize   int64
	Tags      []string // written as tags_str
	Label     string
	CreatedAt time.Time
	CreatedBy string // username of the crawl's creator, owner of its folders
	// Config holds the crawl's settings (ArchiveBox's crawls_crawl.config),
	// written as a JSON object with sorted keys; nil writes {}.
	Config        map[string]string
	SchemaVersion string
}

// MaxCrawlURLs bounds the urls of a Crawl record. Each snapshot of a crawl
// carries the record, so a crawl of 10k URLs would otherwise put 10k URLs
// into each of 10k files; past the bound, the record keeps the first URLs
// and a "#" comment (which ArchiveBox's URL reader skips) saying how many
// more there are and where the whole list is.
const MaxCrawlURLs = 16 << 10

// BoundURLs returns urls whole when it fits MaxCrawlURLs, else its first
// lines and a comment line naming the count left out and rest, the place
// that holds all of them.
func BoundURLs(urls, rest string) string {
	if len(urls) <= MaxCrawlURLs {
		return urls
	}
	cut := strings.LastIndexByte(urls[:MaxCrawlURLs], '\n')
	if cut < 0 {
		cut = 0
	}
	left := strings.Count(strings.TrimSpace(urls[cut:]), "\n") + 1
	head := urls[:cut]
	if head != "" {
		head += "\n"
	}
	return head + "# ... " + strconv.Itoa(left) + " more URLs: see " + rest
}

func (c *Crawl) fields() Object {
	sv := c.SchemaVersion
	if sv == "" {
		sv = SchemaVersion
	}
	config := make(map[string]any, len(c.Config))
	for k, v := range c.Config {
		config[k] = v
	}
	return Object{
		{"type", py(TypeCrawl)},
		{"schema_version", py(sv)},
		{"id", py(c.ID)},
		{"urls", py(c.URLs)},
		{"status", py(c.Status)},
		{"max_depth", py(c.MaxDepth)},
		{"max_urls", py(c.MaxURLs)},
		{"max_size", py(c.MaxSize)},
		{"tags_str", py(TagString(c.Tags))},
		{"label", py(c.Label)},
		{"created_at", py(c.CreatedAt)},
		{"created_by", py(c.CreatedBy)},
		{"config", py(config)},
	}
}

// Crawl returns the Crawl record whose id is the Snapshot record's
// crawl_id: the crawl the snapshot belongs to.
func (ix *Index) Crawl() (Crawl, bool) {
	snap, ok := ix.Snapshot()
	if !ok || snap.CrawlID == "" {
		return Crawl{}, false
	}
	if i := ix.crawlLine(snap.CrawlID); i >= 0 {
		return decodeCrawl(ix.lines[i].object()), true
	}
	return Crawl{}, false
}

func (ix *Index) crawlLine(id string) int {
	for i := range ix.lines {
		l := &ix.lines[i]
		if l.kind == TypeCrawl && compactID(l.object().String("id")) == id {
			return i
		}
	}
	return -1
}

// SetCrawl writes c over the Crawl record with its id (unknown keys keep
// their place and bytes), or inserts it right after the Snapshot record:
// where ArchiveBox's own rewrite keeps the lines it does not write itself
// (formats spec §2.6), before the ArchiveResults.
func (ix *Index) SetCrawl(c Crawl) {
	if i := ix.crawlLine(c.ID); i >= 0 {
		if merged, changed := merge(ix.lines[i].object(), c.fields(), sameRaw); changed {
			ix.lines[i] = line{obj: merged, kind: TypeCrawl}
		}
		return
	}
	at := ix.snapshotLine() + 1
	ix.lines = append(ix.lines, line{})
	copy(ix.lines[at+1:], ix.lines[at:])
	ix.lines[at] = line{obj: c.fields(), kind: TypeCrawl}
}

func decodeCrawl(o Object) Crawl {
	intOf := func(k string) int64 {
		raw, _ := o.Get(k)
		return decodeInt(raw)
	}
	c := Crawl{
		ID:            compactID(o.String("id")),
		URLs:          o.String("urls"),
		Status:        o.String("status"),
		MaxDepth:      int(intOf("max_depth")),
		MaxURLs:       int(intOf("max_urls")),
		MaxSize:       intOf("max_size"),
		Tags:          SplitTags(o.String("tags_str")),
		Label:         o.String("label"),
		CreatedBy:     o.String("created_by"),
		SchemaVersion: o.String("schema_version"),
	}
	raw, _ := o.Get("created_at")
	c.CreatedAt = decodeTime(raw)
	if raw, ok := o.Get("config"); ok {
		if cfg, err := ParseObject(raw); err == nil {
			c.Config = map[string]string{}
			for _, m := range cfg {
				c.Config[m.Key] = cfg.String(m.Key)
			}
		}
	}
	return c
}
