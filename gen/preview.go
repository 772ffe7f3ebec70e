package gen

import (
	"bytes"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"net/url"
)

// Preview sizes: a screenshot scaled to what a listing shows, small
// enough that the demo stays small and fast.
const previewW, previewH = 320, 240

// siteColours are the header colours a page's site gets, by its host.
var siteColours = []color.RGBA{
	{0x1f, 0x4e, 0x79, 0xff}, {0x8b, 0x1e, 0x3f, 0xff}, {0x2e, 0x6b, 0x3f, 0xff},
	{0x5b, 0x3a, 0x8c, 0xff}, {0xc2, 0x5b, 0x12, 0xff}, {0x33, 0x33, 0x33, 0xff},
}

// pagePNG draws a screenshot-like PNG of a web page for rawURL: the
// site's header bar in its colour, a headline, columns of text lines and
// a picture, laid out from the URL alone so the same page always looks
// the same. A palette of six colours keeps it a few KiB.
func pagePNG(rawURL string) []byte {
	host, path := rawURL, rawURL
	if u, err := url.Parse(rawURL); err == nil {
		host, path = u.Host, u.Path+u.RawQuery
	}
	site, page := hash32(host), hash32(path)
	accent := siteColours[site%uint32(len(siteColours))]
	tint := color.RGBA{accent.R/3 + 0xa0, accent.G/3 + 0xa0, accent.B/3 + 0xa0, 0xff}
	palette := color.Palette{
		color.RGBA{0xfb, 0xfb, 0xf8, 0xff}, // 0 page
		accent,                             // 1 header, links
		color.RGBA{0x22, 0x22, 0x22, 0xff}, // 2 headline
		color.RGBA{0xb4, 0xb4, 0xb4, 0xff}, // 3 text
		tint,                               // 4 picture
		color.RGBA{0xff, 0xff, 0xff, 0xff}, // 5 logo, nav
	}
	img := image.NewPaletted(image.Rect(0, 0, previewW, previewH), palette)
	fill := func(x0, y0, x1, y1 int, c uint8) {
		r := image.Rect(x0, y0, x1, y1).Intersect(img.Rect)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.SetColorIndex(x, y, c)
			}
		}
	}
	// The site's header: a logo and its navigation.
	fill(0, 0, previewW, 26, 1)
	fill(10, 8, 10+36+int(site>>4%40), 18, 5)
	for k, x := 0, 140+int(site>>8%30); k < 4 && x < previewW-20; k++ {
		w := 18 + int(site>>(12+k*3)%16)
		fill(x, 11, x+w, 15, 5)
		x += w + 10
	}
	// The headline, one or two lines.
	y := 40
	for k := 0; k <= int(page%2); k++ {
		fill(16, y, 16+150+int(page>>(2+k*5)%120), y+9, 2)
		y += 14
	}
	// A picture beside the text, on the side the page picks.
	picLeft := page>>9%2 == 0
	px := previewW - 16 - 110
	if picLeft {
		px = 16
	}
	fill(px, y+6, px+110, y+6+80, 4)
	fill(px+30, y+36, px+80, y+66, 1) // what the picture shows
	// Lines of text around it, with a link here and there.
	tx0, tx1 := 16, px-12
	if picLeft {
		tx0, tx1 = px+110+12, previewW-16
	}
	for k, ly := 0, y+8; ly < previewH-10; k, ly = k+1, ly+9 {
		x0, x1 := tx0, tx1
		if ly > y+92 {
			x0, x1 = 16, previewW-16
		}
		if k%6 == 5 { // a paragraph ends short
			x1 = x0 + (x1-x0)*int(40+page>>(k%20)%40)/100
		}
		fill(x0, ly, x1, ly+4, 3)
		if k%4 == 1 {
			lx := x0 + int(page>>(k%24)%uint32(max(1, x1-x0-40)))
			fill(lx, ly, lx+30, ly+4, 1)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("gen: encode preview: " + err.Error())
	}
	return b.Bytes()
}

func hash32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
