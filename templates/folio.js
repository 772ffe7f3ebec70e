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

  // Mark frames and images of the preview when they finished loading.
  document.addEventListener("load", function (ev) {
    var el = ev.target;
    if (el && el.id === "preview-frame") { el.setAttribute("data-loaded", "1"); }
  }, true);

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
