// folio static export: image fallbacks, preview state and the filter box
// that searches every snapshot across all pages. Search data lives in
// site/search/<page>.js shards loaded with <script src>, so the filter
// works from file:// as well as from any static host; the captured text
// of each page's snapshots is in site/text/<page>.js, loaded only when the
// "captured text" box is ticked. The filter matches words as 'folio
// search' does and lives in the address (#q=words). No external code.
(function () {
  "use strict";

  // Images carry their fallbacks in data-fallbacks (comma separated);
  // when one fails to load (missing, or not an image a browser decodes)
  // the next is tried. When none is left a favicon goes, leaving no gap,
  // and a preview gives way to a labelled box: never a blank cell or a
  // broken-image icon.
  function missing(img) {
    var label = "no preview", cls = "snapshot-preview-empty preview-broken", tag = "span";
    if (img.classList.contains("favicon")) {
      img.parentNode.removeChild(img);
      return;
    }
    if (img.id === "preview-frame") {
      tag = "p";
      cls = "preview-missing preview-broken";
      label = (img.getAttribute("alt") || "preview") + ": its file is missing or cannot be shown; the link above opens it.";
    } else if (img.parentNode && img.parentNode.classList.contains("card-thumb")) {
      cls = "card-kind preview-broken";
      label = "cannot be shown";
    }
    var box = document.createElement(tag);
    box.className = cls;
    box.textContent = label;
    img.parentNode.replaceChild(box, img);
  }
  document.addEventListener("error", function (ev) {
    var img = ev.target;
    if (!img || img.tagName !== "IMG" || !img.parentNode) { return; }
    var rest = (img.getAttribute("data-fallbacks") || "").split(",").filter(Boolean);
    if (rest.length) {
      img.setAttribute("data-fallbacks", rest.slice(1).join(","));
      img.src = rest[0];
    } else {
      missing(img);
    }
  }, true);

  // Mark frames and images of the preview, and the viewer's frame, when
  // they finished loading.
  document.addEventListener("load", function (ev) {
    var el = ev.target;
    if (el && (el.id === "preview-frame" || el.id === "view-frame" && el.getAttribute("src"))) { el.setAttribute("data-loaded", "1"); }
  }, true);

  // A card's link shows its file in the preview frame, whose sandbox
  // applies to whatever it loads; without scripts, or with a modifier
  // key, the link opens the viewer.
  document.addEventListener("click", function (ev) {
    var a = ev.target && ev.target.closest ? ev.target.closest("a[data-preview]") : null;
    var frame = document.getElementById("preview-frame");
    if (!a || !frame || frame.tagName !== "IFRAME" || !frame.hasAttribute("sandbox") || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) { return; }
    ev.preventDefault();
    frame.removeAttribute("data-loaded");
    frame.src = a.getAttribute("data-preview");
  });

  // The viewer (site/view.html) frames one archived file, named after the
  // "#" of its address: the snapshot folder and the file's path in it,
  // both from the site's root and quoted, separated by ":"
  // (archive/users/…/<id>:dom/output.html). Only a file below archive/ of
  // this site is ever framed, in the frame's sandbox; anything else is
  // refused.
  var segment = /^[A-Za-z0-9\-._~!$&'()*+,;=@%]+$/;
  function cleanPath(p) {
    if (!p) { return null; }
    var parts = p.split("/");
    for (var i = 0; i < parts.length; i++) {
      var d;
      if (!segment.test(parts[i])) { return null; }
      try { d = decodeURIComponent(parts[i]); } catch (e) { return null; }
      if (d === "." || d === ".." || d.indexOf("/") >= 0 || d.indexOf("\\") >= 0) { return null; }
    }
    return parts;
  }
  function viewTarget(hash) {
    var h = hash.replace(/^#/, "");
    var colon = h.indexOf(":");
    if (colon < 0) { return null; }
    var rest = h.slice(colon + 1);
    var q = rest.indexOf("?");
    var dir = cleanPath(h.slice(0, colon));
    var file = cleanPath(q < 0 ? rest : rest.slice(0, q));
    if (!dir || !file || dir[0] !== "archive" || dir.length < 2) { return null; }
    var root = new URL("../", location.href);
    var url = new URL(dir.join("/") + "/" + file.join("/") + (q < 0 ? "" : rest.slice(q)), root);
    if (url.protocol !== root.protocol || url.host !== root.host || url.href.indexOf(root.href + "archive/") !== 0) { return null; }
    return { url: url.href, page: new URL(dir.join("/") + "/index.html", root).href, name: decodeURIComponent(file[file.length - 1]) };
  }
  function showView(siteTitle) {
    var t = viewTarget(location.hash);
    var frame = document.getElementById("view-frame");
    var back = document.getElementById("view-back");
    var dl = document.getElementById("view-download");
    if (frame.hasAttribute("src")) { // a frame is navigated only once: a new one for a new file
      var fresh = frame.cloneNode(false);
      fresh.removeAttribute("src");
      fresh.removeAttribute("data-loaded");
      frame.parentNode.replaceChild(fresh, frame);
      frame = fresh;
    }
    document.getElementById("view-refused").hidden = !!t;
    frame.hidden = back.hidden = dl.hidden = !t;
    document.getElementById("view-name").textContent = t ? t.name : "";
    document.title = t ? t.name + " · " + siteTitle : siteTitle;
    if (!t) { return; }
    back.href = t.page;
    dl.href = t.url;
    dl.setAttribute("download", t.name);
    frame.src = t.url;
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (!document.getElementById("view-frame")) { return; }
    var siteTitle = document.title;
    showView(siteTitle);
    window.addEventListener("hashchange", function () { showView(siteTitle); });
  });

  // A store holds one kind of shard, page number -> rows, loaded once.
  function store(dir) {
    return { dir: dir, shards: {}, loaded: 0, loading: false, waiting: [] };
  }
  var search = store("search/"); // rows: see shardRow in export/shards.go
  var text = store("text/");     // rows: the captured text, lower case, in the same order
  var pages = 0;
  // The fields of a search row (export/shards.go's shard* constants).
  var F = { href: 0, title: 1, url: 2, tags: 3, state: 4, saved: 5, size: 6, label: 7, preview: 8, previewFallbacks: 9,
    favicon: 10, faviconFallbacks: 11, fullTitle: 12, linkable: 13, outputs: 14, failures: 15, status: 16, pending: 17, icons: 18 };

  // Shards call folioSearch.add(page, rows) and folioText.add(page, rows).
  function adder(st) {
    return {
      add: function (page, rows) {
        if (!st.shards[page]) { st.loaded++; }
        st.shards[page] = rows;
      },
    };
  }
  window.folioSearch = adder(search);
  window.folioText = adder(text);

  // Words, as 'folio search' reads them (SQLite FTS5's unicode61 tokens
  // with remove_diacritics): runs of letters, digits and marks, in any
  // case, accents ignored. norm turns a text into its words, each
  // followed by one space, so that " w1 w2 " finds words in order.
  var nonWord = /[^\p{L}\p{N}\p{M}\p{Co}]+/u;
  function words(s) {
    return s.normalize("NFKD").replace(/\p{Mn}/gu, "").toLowerCase().split(nonWord).filter(Boolean);
  }
  function norm(s) {
    var w = words(s);
    return w.length ? " " + w.join(" ") + " " : " ";
  }
  // query turns what was typed into terms, each a run of words that must
  // appear together: every term must match, in any order. A typed word
  // ("c++", "don't", "how") is a term of its words; "quoted words" are
  // one term. The last word of each term matches the start of a word, so
  // the rows narrow as one types.
  function query(q) {
    var terms = [], re = /"([^"]*)"?|(\S+)/g, m;
    while ((m = re.exec(q)) !== null) {
      var w = words(m[1] !== undefined ? m[1] : m[2]);
      if (w.length) { terms.push(" " + w.join(" ")); }
    }
    return terms;
  }
  function matches(hay, terms) {
    for (var i = 0; i < terms.length; i++) {
      if (hay.indexOf(terms[i]) < 0) { return false; }
    }
    return true;
  }
  // The words of each row, made once per shard when first searched.
  var hays = {}, textHays = {};
  function hayOf(p, i) {
    var h = hays[p] || (hays[p] = []);
    if (h[i] === undefined) {
      var r = search.shards[p][i];
      h[i] = norm([r[F.title], r[F.url], r[F.tags], r[F.state], r[F.label], r[F.status]].join(" "));
    }
    return h[i];
  }
  function textHayOf(p, i) {
    var h = textHays[p] || (textHays[p] = []);
    if (h[i] === undefined) {
      var t = (text.shards[p] || [])[i];
      h[i] = t ? norm(t) : " ";
    }
    return h[i];
  }

  function loadAll(st, done) {
    if (st.loaded >= pages) { done(); return; }
    st.waiting.push(done);
    if (st.loading) { return; }
    st.loading = true;
    var site = document.body.getAttribute("data-site");
    var pending = 0;
    function finished() {
      pending--;
      if (pending === 0) {
        st.loading = false;
        var w = st.waiting;
        st.waiting = [];
        w.forEach(function (f) { f(); });
      }
    }
    for (var p = 1; p <= pages; p++) {
      if (st.shards[p]) { continue; }
      pending++;
      var s = document.createElement("script");
      s.src = site + st.dir + p + ".js";
      s.onload = finished;
      s.onerror = finished;
      document.head.appendChild(s);
    }
    if (pending === 0) { st.loading = false; done(); }
  }

  function el(parent, tag, cls, txt) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (txt !== undefined) { e.textContent = txt; }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function link(parent, href, cls, txt) {
    var a = el(parent, "a", cls, txt);
    a.href = href;
    return a;
  }
  function img(parent, src, fallbacks, cls) {
    var i = el(null, "img", cls);
    i.setAttribute("data-fallbacks", fallbacks);
    i.alt = "";
    i.loading = "lazy";
    parent.appendChild(i);
    i.src = src;
    return i;
  }
  function rebase(root, hrefs) {
    return hrefs.split(",").filter(Boolean).map(function (h) { return root + h; }).join(",");
  }

  // row builds the row a root page shows for search row r, as
  // templates/root.html does: links relative to this page are the root's
  // way (data-root) and the link from the root.
  function row(r, root) {
    var tr = el(null, "tr", "snapshot-row search-row status-" + r[F.status]);
    var page = root + r[F.href];
    var saved = r[F.saved].split(" ");
    var t = link(el(tr, "td", "snapshot-time"), page);
    el(t, "span", "", saved[0]);
    el(t, "small", "", saved[1] || "");
    var pa = link(el(tr, "td", "snapshot-preview-cell"), page);
    pa.tabIndex = -1;
    pa.setAttribute("aria-hidden", "true");
    if (r[F.pending]) {
      el(pa, "span", "snapshot-preview-empty pending-label", r[F.label]);
    } else if (r[F.preview]) {
      img(pa, root + r[F.preview], rebase(root, r[F.previewFallbacks]), "snapshot-preview screenshot");
    } else {
      el(pa, "span", "snapshot-preview-empty", "no preview");
    }
    var tc = el(tr, "td", "snapshot-title-cell");
    var ta = link(tc, page, "snapshot-title");
    if (r[F.fullTitle]) { ta.title = r[F.fullTitle]; }
    if (r[F.favicon]) { img(ta, root + r[F.favicon], rebase(root, r[F.faviconFallbacks]), "favicon"); }
    ta.appendChild(document.createTextNode(r[F.title]));
    var u;
    if (r[F.linkable]) {
      u = link(tc, r[F.url], "snapshot-url", r[F.url]);
      u.target = "_blank";
      u.rel = "noopener noreferrer";
    } else {
      u = el(tc, "span", "snapshot-url", r[F.url]);
    }
    u.title = r[F.url];
    el(tc, "span", "snapshot-mobile-saved", saved[0]);
    var tags = el(tr, "td", "snapshot-tags");
    r[F.tags].split(",").filter(Boolean).forEach(function (tag) { el(tags, "span", "snapshot-tag", tag); });
    el(el(tr, "td", "snapshot-status"), "span", "status-pill status-" + r[F.state], r[F.label] || r[F.state]);
    var icons = el(el(tr, "td", "snapshot-files-cell"), "span", "files-icons");
    (r[F.icons] || []).forEach(function (ic) {
      var a = link(icons, root + ic[2], "exists-True ic ic-" + ic[1]);
      a.title = ic[0];
      el(a, "span", "sr", ic[0]);
    });
    var sc = el(tr, "td", "snapshot-size-cell");
    var sa = link(sc, page.replace(/index\.html$/, "index.jsonl"), "", r[F.size]);
    sa.title = "View archived file manifest";
    el(sc, "small", "", r[F.outputs] + " output" + (r[F.outputs] === "1" ? "" : "s"));
    if (r[F.failures] && r[F.failures] !== "0") { el(sc, "small", "failures", r[F.failures] + " failed"); }
    return tr;
  }

  var maxShown = 1000;

  function render(q, withText, pageRows, searchRows, count, state) {
    var root = document.body.getAttribute("data-root");
    var terms = query(q);
    var found = [];
    var total = 0;
    for (var p = 1; p <= pages; p++) {
      var rows = search.shards[p] || [];
      for (var i = 0; i < rows.length; i++) {
        // Every term in the row, or (when asked) every term in the row
        // and its captured text together, as 'folio search' finds them.
        var hit = matches(hayOf(p, i), terms);
        if (!hit && withText) { hit = matches(hayOf(p, i) + textHayOf(p, i), terms); }
        if (hit) {
          total++;
          if (found.length < maxShown) { found.push(rows[i]); }
        }
      }
    }
    while (searchRows.firstChild) { searchRows.removeChild(searchRows.firstChild); }
    found.forEach(function (r) { searchRows.appendChild(row(r, root)); });
    pageRows.hidden = true;
    searchRows.hidden = false;
    count.textContent = String(total);
    var where = withText ? "matches from all pages, captured text included" : "matches from all pages";
    state.textContent = total > maxShown ? "showing the first " + maxShown + " " + where : where;
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("static-search");
    if (!box) { return; }
    pages = parseInt(document.body.getAttribute("data-pages"), 10) || 0;
    var inText = document.getElementById("static-search-text");
    var pageRows = document.getElementById("page-rows");
    var searchRows = document.getElementById("search-rows");
    var count = document.getElementById("visible-count");
    var state = document.getElementById("search-state");
    var initial = count.textContent;
    var timer = null;
    // The filter lives in the address (#q=words, &text=1 with the
    // captured text), so a filtered view can be bookmarked and shared,
    // from file:// as from any host.
    function saveState(q, withText) {
      var h = q ? "#q=" + encodeURIComponent(q) + (withText ? "&text=1" : "") : "";
      if (h !== location.hash && (h || location.hash)) {
        history.replaceState(null, "", h || location.pathname + location.search);
      }
    }
    function loadState() {
      var q = "", withText = false;
      location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
        var i = kv.indexOf("=");
        var k = i < 0 ? kv : kv.slice(0, i), v = i < 0 ? "" : kv.slice(i + 1);
        try { v = decodeURIComponent(v.replace(/\+/g, " ")); } catch (e) { return; }
        if (k === "q") { q = v; }
        if (k === "text") { withText = v === "1"; }
      });
      if (!q) { return false; }
      box.value = q;
      if (inText) { inText.checked = withText; }
      return true;
    }
    function update() {
      var q = box.value.trim();
      var withText = !!(inText && inText.checked);
      saveState(q, withText);
      if (!query(q).length) {
        searchRows.hidden = true;
        pageRows.hidden = false;
        count.textContent = initial;
        state.textContent = q ? "type a word (letters or digits) to filter" : "";
        return;
      }
      state.textContent = withText ? "searching, captured text included…" : "searching…";
      loadAll(search, function () {
        var show = function () {
          if (box.value.trim() === q) { render(q, withText, pageRows, searchRows, count, state); }
        };
        if (withText) { loadAll(text, show); } else { show(); }
      });
    }
    if (inText) { inText.addEventListener("change", update); }
    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(update, 120);
    });
    window.addEventListener("hashchange", function () {
      if (loadState()) { update(); }
    });
    if (loadState() || box.value) { update(); }
  });
})();
