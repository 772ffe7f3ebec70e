package input

import "bytes"

// urlList reads one URL a line, skipping blank lines and # comments.
func (p *parser) urlList(data []byte) {
	lines(data, func(n int, line []byte) {
		line = bytes.TrimSpace(line)
		if isComment(line) {
			return
		}
		p.add(Item{URL: string(line), Line: n})
	})
}
