package export

// RobotsFile keeps search engines out of the archived copies, where a
// crawler would index (and serve as a search result) pages that belong
// to others, and lets them index folio's own pages: the list of
// snapshots and each snapshot's page. Rules use RFC 9309's "*" and "$",
// and the longest matching rule wins, so a snapshot page
// (archive/users/<user>/snapshots/<date>/<domain>/<id>/index.html, or a
// legacy archive/<timestamp>/index.html) is allowed while an index.html
// deeper in its folder (a wget mirror's) is not. A robots.txt counts only
// at the root of a host: an export published under a sub-path needs the
// host's own.
const RobotsFile = "robots.txt"

const robotsClosed = `# Written by folio export: search engines may index the list of snapshots
# and each snapshot's page, not the archived copies. 'folio export
# --allow-crawlers' (or EXPORT_ALLOW_CRAWLERS = True in ArchiveBox.conf)
# lets them index everything.
User-agent: *
Allow: /archive/*/index.html$
Disallow: /archive/*/*/index.html$
Allow: /archive/users/*/snapshots/*/*/*/index.html$
Disallow: /archive/users/*/snapshots/*/*/*/*/index.html$
Disallow: /archive/
`

const robotsOpen = `# Written by folio export --allow-crawlers (or EXPORT_ALLOW_CRAWLERS = True
# in ArchiveBox.conf): search engines may index everything, the archived
# copies included.
User-agent: *
Disallow:
`

// writeRobots writes robots.txt, unless it is there as it would be written.
func (s *site) writeRobots() error {
	body := robotsClosed
	if s.opts.AllowCrawlers {
		body = robotsOpen
	}
	return s.writeChanged(RobotsFile, []byte(body))
}
