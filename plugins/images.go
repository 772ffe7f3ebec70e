package plugins

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	_ "image/gif" // image sizes, for the density of a chosen image
	_ "image/jpeg"
	_ "image/png"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// images gives each responsive image (srcset, <picture>) the one image
// it showed: the capture's MarkCurrent when there is one, else the
// candidate a browser at the capture's window width and a device pixel
// ratio of 1 picks. The image keeps the size it rendered at: one chosen
// for a density of 2 is written as a srcset of that one image at 2x.
func (in *inliner) images(doc *goquery.Document, base *url.URL) {
	viewport, _, err := in.job.Config.Resolution("screenshot")
	if err != nil || viewport <= 0 {
		viewport = 1440
	}
	doc.Find("img[" + MarkCurrent + "]").Each(func(_ int, s *goquery.Selection) {
		cur, _ := s.Attr(MarkCurrent)
		data := in.dataURL(cur, base)
		if data == "" {
			s.RemoveAttr(MarkCurrent) // the guess below applies
			return
		}
		density := 0.0
		if nat, ok := s.Attr(MarkNatural); ok {
			if f := strings.Fields(nat); len(f) == 2 {
				if w, err := strconv.ParseFloat(f[0], 64); err == nil && w > 0 {
					if px := pixelWidth(data); px > 0 {
						density = float64(px) / w
					}
				}
			}
		}
		if density == 0 {
			for _, c := range parseSrcset(attrVal(s, "srcset")) {
				if u, _ := resolve(c.url, base); u == cur && c.x > 0 {
					density = c.x
				}
			}
		}
		setImage(s, data, density)
		if goquery.NodeName(s.Parent()) == "picture" {
			s.Parent().Children().Filter("source").Remove()
		}
	})
	sel := doc.Find("img[srcset], source[srcset]").Not("[" + MarkCurrent + "]")
	var urls []string
	sel.Each(func(_ int, s *goquery.Selection) {
		if c, ok := choose(s, viewport); ok {
			u, _ := resolve(c.url, base)
			urls = append(urls, u)
		}
	})
	in.prefetch(urls)
	sel.Each(func(_ int, s *goquery.Selection) {
		c, ok := choose(s, viewport)
		s.RemoveAttr("srcset")
		s.RemoveAttr("sizes")
		if !ok {
			return
		}
		if data := in.dataURL(c.url, base); data != "" {
			setImage(s, data, c.x)
		}
	})
}

func attrVal(s *goquery.Selection, name string) string {
	v, _ := s.Attr(name)
	return v
}

// setImage makes data the image s (an img or a source) shows, at the
// given density (0 or 1: its pixels are CSS pixels).
func setImage(s *goquery.Selection, data string, density float64) {
	s.RemoveAttr("srcset")
	s.RemoveAttr("sizes")
	density = math.Round(density*1e4) / 1e4
	if density > 0 && density != 1 {
		s.SetAttr("srcset", data+" "+strconv.FormatFloat(density, 'f', -1, 64)+"x")
		s.RemoveAttr("src") // the srcset wins, and one copy of the image is enough
		return
	}
	if goquery.NodeName(s) == "source" {
		s.SetAttr("srcset", data)
		return
	}
	s.SetAttr("src", data)
}

// candidate is one image of a srcset, its density resolved (x; 0 when
// unknown).
type candidate struct {
	url string
	x   float64
	w   float64 // the width descriptor, 0 when none
}

// choose guesses the srcset candidate a browser picked for s at a device
// pixel ratio of 1: the smallest density of at least 1, else the largest.
// Width descriptors are turned into densities by the slot size sizes
// gives (its last length in px or vw, else the whole viewport).
func choose(s *goquery.Selection, viewport int) (candidate, bool) {
	cs := parseSrcset(attrVal(s, "srcset"))
	hasOne, hasW := false, false
	for _, c := range cs {
		hasOne = hasOne || c.x == 1
		hasW = hasW || c.w > 0
	}
	if src := attrVal(s, "src"); src != "" && !hasOne && !hasW && goquery.NodeName(s) == "img" {
		cs = append(cs, candidate{url: src, x: 1})
	}
	slot := slotWidth(attrVal(s, "sizes"), viewport)
	best, found := candidate{}, false
	for _, c := range cs {
		if c.w > 0 {
			c.x = c.w / slot
		}
		if c.x <= 0 {
			c.x = 1
		}
		switch {
		case !found:
			best, found = c, true
		case best.x < 1 && c.x > best.x, c.x >= 1 && c.x < best.x:
			best = c
		}
	}
	return best, found
}

// slotWidth reads the width sizes gives an image with no media condition
// (its last entry) in CSS pixels; 100vw when it cannot.
func slotWidth(sizes string, viewport int) float64 {
	parts := strings.Split(sizes, ",")
	last := strings.TrimSpace(parts[len(parts)-1])
	if f := strings.Fields(last); len(f) > 0 {
		last = f[len(f)-1]
	}
	for unit, scale := range map[string]float64{"px": 1, "vw": float64(viewport) / 100} {
		if v, err := strconv.ParseFloat(strings.TrimSuffix(last, unit), 64); strings.HasSuffix(last, unit) && err == nil && v > 0 {
			return v * scale
		}
	}
	return float64(viewport)
}

// parseSrcset splits a srcset as the HTML standard does: a URL (which may
// hold commas, as data: URLs do) and its descriptors.
func parseSrcset(set string) []candidate {
	var out []candidate
	i := 0
	for i < len(set) {
		for i < len(set) && (set[i] == ',' || isSpace(set[i])) {
			i++
		}
		start := i
		for i < len(set) && !isSpace(set[i]) {
			i++
		}
		u := set[start:i]
		desc := ""
		if strings.HasSuffix(u, ",") {
			u = strings.TrimRight(u, ",")
		} else {
			start = i
			depth := 0
			for i < len(set) && (set[i] != ',' || depth > 0) {
				if set[i] == '(' {
					depth++
				} else if set[i] == ')' {
					depth--
				}
				i++
			}
			desc = set[start:i]
		}
		if u == "" {
			continue
		}
		c := candidate{url: u}
		for _, d := range strings.Fields(desc) {
			v, err := strconv.ParseFloat(d[:len(d)-1], 64)
			switch {
			case err != nil || v <= 0:
			case strings.HasSuffix(d, "x"):
				c.x = v
			case strings.HasSuffix(d, "w"):
				c.w = v
			}
		}
		out = append(out, c)
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// pixelWidth is the width in pixels of the image a data: URL holds (PNG,
// JPEG, GIF, WebP), 0 when it cannot tell.
func pixelWidth(data string) int {
	_, b64, ok := strings.Cut(data, ";base64,")
	if !ok {
		return 0
	}
	// The header is enough: decode a prefix only.
	body, err := base64.StdEncoding.DecodeString(b64[:min(len(b64), 1<<16)])
	if err != nil {
		return 0
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(body)); err == nil {
		return cfg.Width
	}
	return webpWidth(body)
}

// webpWidth reads a WebP's width from its first chunk's header.
func webpWidth(b []byte) int {
	if len(b) < 30 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0
	}
	switch string(b[12:16]) {
	case "VP8X":
		return int(uint32(b[24])|uint32(b[25])<<8|uint32(b[26])<<16) + 1
	case "VP8L":
		return int(binary.LittleEndian.Uint16(b[21:23])&0x3fff) + 1
	case "VP8 ":
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff)
	}
	return 0
}
