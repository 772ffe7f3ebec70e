//go:build tools

// Package tools pins the modules folio builds on before every one of them is imported.
package tools
import (
 _ "github.com/spf13/cobra"
 _ "modernc.org/sqlite"
 _ "golang.org/x/sync/errgroup"
 _ "golang.org/x/sys/unix"
 _ "golang.org/x/term"
 _ "github.com/rogpeppe/go-internal/testscript"
 _ "github.com/chromedp/chromedp"
 _ "github.com/yuin/goldmark"
 _ "github.com/klauspost/compress/zstd"
 _ "github.com/PuerkitoBio/goquery"
 _ "github.com/fsnotify/fsnotify"
)
