// folio static export: image fallbacks, preview state and the filter box
// that searches every snapshot across all pages. Search data lives in
// site/search/<page>.js shards loaded with <script src>, so the filter
// works from file:// as well as from any static host; the captured text
// of each page's snapshots is in site/text/<page>.js, loaded only when the
// "captured text" box is ticked. No external code.
(function () {
  "use strict";

  // Images carry their fallbacks in data-fallbacks (comma separated);
  // when one fails to load the next is tried, and the image is hidden
  // when none is left.
  document.addEventListener("error", function (ev) {
    var img = ev.target;
    if (!img || img.tagName !== "IMG" || !img.hasAttribute("data-fallbacks")) { return; }
    var rest = img.getAttribute("data-fallbacks").split(",").filter(Boolean);
    if (rest.length) {
      img.setAttribute("data-fallbacks", rest.slice(1).join(","));
      img.src = rest[0];
    } else {
      img.removeAttribute("data-fallbacks");
      img.style.visibility = "hidden";
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
    if (!a || !frame || frame.tagName !== "IFRAME" || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) { return; }
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
  var search = store("search/"); // rows: [href, title, url, tags, status, date, size, status label]
  var text = store("text/");     // rows: the captured text, lower case, in the same order
  var pages = 0;

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

  function cell(tr, cls) {
    var td = document.createElement("td");
    if (cls) { td.className = cls; }
    tr.appendChild(td);
    return td;
  }

  var maxShown = 1000;

  function render(q, withText, pageRows, searchRows, count, state) {
    var root = document.body.getAttribute("data-root");
    var needle = q.toLowerCase();
    var words = needle.split(/\s+/).filter(Boolean);
    var matches = [];
    var total = 0;
    for (var p = 1; p <= pages; p++) {
      var rows = search.shards[p] || [];
      var texts = withText ? text.shards[p] || [] : [];
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i];
        var hay = (r[1] + "\n" + r[2] + "\n" + r[3] + "\n" + r[4] + "\n" + r[7]).toLowerCase();
        var hit = hay.indexOf(needle) >= 0;
        if (!hit && texts[i]) {
          // Every word somewhere in the text, as 'folio search' finds them.
          hit = words.every(function (w) { return texts[i].indexOf(w) >= 0; });
        }
        if (hit) {
          total++;
          if (matches.length < maxShown) { matches.push(r); }
        }
      }
    }
    while (searchRows.firstChild) { searchRows.removeChild(searchRows.firstChild); }
    matches.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.className = "snapshot-row search-row status-" + r[4];
      var a = document.createElement("a");
      a.href = root + r[0];
      a.textContent = r[5];
      cell(tr, "snapshot-time").appendChild(a);
      cell(tr, "snapshot-preview-cell");
      var t = cell(tr, "snapshot-title-cell");
      var ta = document.createElement("a");
      ta.className = "snapshot-title";
      ta.href = root + r[0];
      ta.textContent = r[1];
      ta.title = r[1];
      t.appendChild(ta);
      var u = document.createElement("span");
      u.className = "snapshot-url";
      u.textContent = r[2];
      u.title = r[2];
      t.appendChild(u);
      var tags = cell(tr, "snapshot-tags");
      r[3].split(",").filter(Boolean).forEach(function (tag) {
        var s = document.createElement("span");
        s.className = "snapshot-tag";
        s.textContent = tag;
        tags.appendChild(s);
      });
      var st = document.createElement("span");
      st.className = "status-pill status-" + r[4];
      st.textContent = r[7] || r[4];
      cell(tr, "snapshot-status").appendChild(st);
      cell(tr, "snapshot-files-cell");
      cell(tr, "snapshot-size-cell").textContent = r[6];
      searchRows.appendChild(tr);
    });
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
    function update() {
      var q = box.value.trim();
      if (!q) {
        searchRows.hidden = true;
        pageRows.hidden = false;
        count.textContent = initial;
        state.textContent = "";
        return;
      }
      var withText = !!(inText && inText.checked);
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
    if (box.value) { update(); }
  });
})();
