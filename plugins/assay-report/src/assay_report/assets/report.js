/* assay report: draws the tables and charts of the JSON document in #assay-report-data.
 * Tables: real <table> markup; each header is a button (click, Enter or Space sorts; aria-sort
 * says how); a search box per table hides the rows that do not contain its text.
 * Charts: Vega-Lite through vega-embed (inlined), drawn on a canvas; hovering shows the nearest point's
 * values, clicking a legend entry hides or shows its series. */
(function () {
  "use strict";
  // Okabe-Ito, its black swapped for wine (black is the oracle): distinguishable with the common colour-vision
  // deficiencies; past eight series the dash and marker change, which tells series apart in print.
  var PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#882255"];
  /* A table's body is split into <tbody class="chunk"> of CHUNK rows: the browser skips the layout and paint of
   * the chunks off screen (content-visibility: auto, report.css), the bulk of a 10,000-row page's load. */
  var CHUNK = 200;
  var data = JSON.parse(document.getElementById("assay-report-data").textContent);

  function num(v) {
    if (v === null || v === undefined) return NaN;
    if (v === "NaN") return NaN;
    if (v === "Infinity") return Infinity;
    if (v === "-Infinity") return -Infinity;
    return v;
  }
  function fmt(v, kind) {
    v = num(v);
    if (Number.isNaN(v)) return "NaN";
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    if (kind === "int") return String(v);
    if (v !== 0 && Math.abs(v) < 1e-3) return v.toExponential(2);
    return v.toFixed(4);
  }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  /* A cell: its text, its sort key and its full-precision value (data-value). */
  function cell(v, col) {
    if (col.kind === "text") return {text: v === null ? "" : String(v), key: v === null ? "" : String(v), value: null};
    if (v === null || v === undefined) return {text: "n/a", key: NaN, value: null};
    if (Array.isArray(v)) {
      var text = col.spread === "std" ? fmt(v[0]) + " \u00b1 " + fmt(v[1])
                                      : fmt(v[0]) + " [" + fmt(v[1]) + ", " + fmt(v[2]) + "]";
      return {text: text, key: num(v[0]), value: v};
    }
    return {text: fmt(v, col.kind), key: num(v), value: [v]};
  }

  function sources() {
    var box = document.getElementById("sources");
    var t = el("table", {"class": "sources"});
    t.appendChild(el("caption", {"class": "legend"}, "What this report shows"));
    var head = el("tr");
    ["input", "kind", "what was evaluated", "provenance signature"].forEach(function (h) {
      head.appendChild(el("th", {scope: "col"}, h));
    });
    t.appendChild(el("thead")).appendChild(head);
    var body = t.appendChild(el("tbody"));
    data.sources.forEach(function (s) {
      var tr = el("tr");
      tr.appendChild(el("td")).appendChild(el("code", {}, s.path));
      tr.appendChild(el("td", {}, s.kind));
      tr.appendChild(el("td", {}, s.what));
      tr.appendChild(el("td")).appendChild(el("code", {"class": "signature"}, s.signature || "(none recorded)"));
      body.appendChild(tr);
    });
    box.appendChild(t);
    box.appendChild(el("p", {"class": "legend"}, "assay " + (data.versions.assay || "") +
      ". In the tables, bold: not significantly worse than the best of its column; \u25B2: the best. " +
      "Click a column header (or press Enter on it) to sort; type in a table's box to filter its rows."));
  }

  function table(sec, index, main) {
    var id = "t" + index;
    var section = main.appendChild(el("section", {"class": "table-section", "aria-labelledby": id + "-title"}));
    section.appendChild(el("h2", {id: id + "-title"}, sec.title));
    var tools = section.appendChild(el("div", {"class": "tools"}));
    var filter = tools.appendChild(el("input", {type: "search", placeholder: "Filter rows\u2026",
                                                "aria-label": "Filter the rows of: " + sec.title, "class": "filter"}));
    var count = tools.appendChild(el("span", {"class": "count", "aria-live": "polite"}));
    var marks = {};
    sec.best.forEach(function (p) { marks[p[0] + "," + p[1]] = "best"; });
    sec.tied.forEach(function (p) { if (!marks[p[0] + "," + p[1]]) marks[p[0] + "," + p[1]] = "tied"; });
    var cols = sec.columns;
    var keys = [];
    // a chunked table is shown with CSS display other than table's (fixColumns): explicit ARIA roles keep it a table
    // for screen readers, which may otherwise read it as blocks of text
    var chunked = sec.rows.length > CHUNK;
    var role = chunked ? function (r) { return ' role="' + r + '"'; } : function () { return ""; };
    var parts = ["<thead" + role("rowgroup") + "><tr" + role("row") + ">"];
    cols.forEach(function (c, j) {
      var dir = c.hib === true ? " (higher is better)" : c.hib === false ? " (lower is better)" : "";
      parts.push('<th scope="col"' + role("columnheader") + ' aria-sort="none" data-col="' + j + '"><button type="button" title="Sort by ' +
                 esc(c.label + dir) + '">' + esc(c.label) + '<span class="arrow" aria-hidden="true"></span></button></th>');
    });
    parts.push("</tr></thead>");
    var texts = [];
    sec.rows.forEach(function (row, i) {
      if (i % CHUNK === 0) parts.push((i ? "</tbody>" : "") + '<tbody class="chunk"' + role("rowgroup") + '>');
      var rowKeys = [];
      var rowText = [];
      parts.push('<tr data-row="' + i + '"' + role("row") + '>');
      row.forEach(function (v, j) {
        var c = cell(v, cols[j]);
        rowKeys.push(c.key);
        rowText.push(c.text);
        var mark = marks[i + "," + j];
        var cls = (cols[j].kind === "text" ? "text" : "num") + (mark === "best" ? " best tied" : mark === "tied" ? " tied" : "");
        var attrs = ' class="' + cls + '"' + role(j === 0 ? "rowheader" : "cell");
        if (c.value !== null) attrs += ' data-value="' + esc(c.value.map(String).join(" ")) + '"';
        if (mark) attrs += ' title="' + (mark === "best" ? "best of its column" : "not significantly worse than the best") + '"';
        if (cols[j].kind === "text") attrs += ' title="' + esc(c.text) + '"';
        parts.push((j === 0 ? "<th scope=\"row\"" : "<td") + attrs + ">" + esc(c.text) + (j === 0 ? "</th>" : "</td>"));
      });
      parts.push("</tr>");
      keys.push(rowKeys);
      texts.push(rowText.join("\u0001").toLowerCase());
    });
    parts.push(sec.rows.length ? "</tbody>" : "<tbody></tbody>");
    var wrap = section.appendChild(el("div", {"class": "scroll", tabindex: "0", role: "region",
                                              "aria-label": "Table: " + sec.title}));
    var t = wrap.appendChild(el("table", {"class": "data" + (chunked ? " measure" : ""), id: id}));
    if (chunked) t.setAttribute("role", "table");
    t.appendChild(el("caption", {"class": "visually-hidden"}, sec.title));  // the h2 shows it
    t.insertAdjacentHTML("beforeend", parts.join(""));
    if (chunked) fixColumns(t);
    var bodies = Array.prototype.slice.call(t.tBodies);
    var trs = [];
    bodies.forEach(function (b) { Array.prototype.push.apply(trs, b.rows); });
    var order = trs.map(function (_, i) { return i; });  // the rows in page order (the last sort's)
    /* Put the rows back into the chunks in page order, CHUNK shown rows to a chunk (the hidden ones ride along
     * and take no room); a chunk with no shown row is hidden, so that its remembered height leaves no gap. */
    function refill() {
      var frags = bodies.map(function () { return document.createDocumentFragment(); });
      var shown = bodies.map(function () { return 0; });
      var n = 0;
      order.forEach(function (i) {
        var b = Math.min(Math.floor(n / CHUNK), bodies.length - 1);
        frags[b].appendChild(trs[i]);
        if (!trs[i].hidden) { n++; shown[b]++; }
      });
      bodies.forEach(function (body, b) {
        body.appendChild(frags[b]);
        body.hidden = shown[b] === 0;
      });
      return n;
    }
    function showCount(shown) { count.textContent = "showing " + shown + " of " + trs.length + " rows"; }
    showCount(trs.length);
    filter.addEventListener("input", function () {
      var q = filter.value.trim().toLowerCase();
      for (var i = 0; i < trs.length; i++) trs[i].hidden = q !== "" && texts[i].indexOf(q) < 0;
      showCount(refill());
    });
    var ths = Array.prototype.slice.call(t.tHead.rows[0].cells);
    ths.forEach(function (th, j) {
      th.querySelector("button").addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        var text = cols[j].kind === "text";
        order = trs.map(function (_, i) { return i; });
        order.sort(function (a, b) {
          var x = keys[a][j], y = keys[b][j];
          if (!text) {  // a missing or NaN value goes last either way
            var xn = Number.isNaN(x), yn = Number.isNaN(y);
            if (xn || yn) return xn === yn ? a - b : xn ? 1 : -1;
            if (x === y) return a - b;
            return asc ? (x < y ? -1 : 1) : (x < y ? 1 : -1);
          }
          var r = String(x).localeCompare(String(y), undefined, {numeric: true});
          return r === 0 ? a - b : asc ? r : -r;
        });
        refill();
        ths.forEach(function (other) {
          other.setAttribute("aria-sort", "none");
          other.querySelector(".arrow").textContent = "";
        });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        th.querySelector(".arrow").textContent = asc ? "\u25B4" : "\u25BE";
      });
    });
    notes(section, sec.notes);
  }

  /* A table of more than one chunk: lay out its header and first chunk as a table (the others are not displayed,
   * class "measure"), fix each column at the width it took there (a longer text later is cut, with an ellipsis; its
   * cell's title holds it), then show every chunk as a block of rows of those widths (class "chunked", report.css):
   * a block, unlike a table row group, can skip its layout and paint while off screen (content-visibility). */
  function fixColumns(t) {
    var widths = Array.prototype.map.call(t.tHead.rows[0].cells, function (th) { return th.getBoundingClientRect().width; });
    var rules = widths.map(function (w, j) {
      return "#" + t.id + " tr > :nth-child(" + (j + 1) + ") { width: " + w + "px; min-width: " + w + "px; max-width: " + w + "px; }";
    });
    document.head.appendChild(el("style", {}, rules.join("\n")));
    t.classList.remove("measure");
    t.classList.add("chunked");
  }

  function notes(section, list) {
    (list || []).forEach(function (n) { section.appendChild(el("p", {"class": "notes"}, n)); });
  }

  /* Vega strokeDash patterns: solid, then the dashes of the series past the palette, cycle by cycle. */
  var DASHES = [[], [6, 4], [2, 3], [6, 3, 2, 3], [12, 4], [12, 4, 2, 4]];
  var REFERENCE_DASH = {dash: [6, 4], dot: [2, 3]};
  var SHAPES = ["circle", "square", "diamond", "triangle-up", "cross", "triangle-down"];

  /* One chart: a Vega spec (not Vega-Lite: the Vega that Vega-Lite compiles for these charts took
   * about 1.8 times the main-thread time to draw, bench/README.md) drawn by vega-embed on a canvas. One row per point ({n: series, x,
   * y}); the lines are one mark faceted by series; "markers" series also get symbols; invisible
   * symbols on every point carry the tooltip and show when the pointer is on one. Clicking a legend
   * entry hides or shows its series (the signal "hidden" lists the hidden ones). The curves hold only
   * finite numbers; a non-finite point would be left out of the chart (the tables show every value). */
  function chart(sec, index, main) {
    var id = "c" + index;
    var section = main.appendChild(el("section", {"class": "chart-section", "aria-labelledby": id + "-title"}));
    section.appendChild(el("h2", {id: id + "-title"}, sec.title));
    var div = section.appendChild(el("div", {"class": "chart", id: id, role: "img",
                                             "aria-label": sec.title + ": " + sec.series.map(function (s) { return s.name; }).join(", ")}));
    var names = [], colours = [], dashes = [], shapes = [], rows = [], markers = [];
    var k = 0;
    sec.series.forEach(function (s) {
      var reference = s.style === "dash" || s.style === "dot";
      var cycle = Math.floor(k / PALETTE.length);
      names.push(s.name);
      colours.push(reference ? (s.style === "dash" ? "#000000" : "#777777") : PALETTE[k % PALETTE.length]);
      dashes.push(reference ? REFERENCE_DASH[s.style] : DASHES[cycle % DASHES.length]);
      shapes.push(SHAPES[cycle % SHAPES.length]);
      if (!reference) k++;
      var shape = s.style === "step" ? "step-after" : "linear";
      for (var j = 0; j < s.x.length; j++) {
        var row = {n: s.name, x: num(s.x[j]), y: num(s.y[j]), i: shape};
        if (!Number.isFinite(row.x) || !Number.isFinite(row.y)) continue;
        rows.push(row);
        if (s.style === "markers") markers.push(row);
      }
    });
    var visible = "indexof(hidden, datum.n) < 0";
    var xy = {x: {scale: "x", field: "x"}, y: {scale: "y", field: "y"}};
    function enc(extra) { return Object.assign({}, xy, extra); }
    var spec = {
      height: 400, padding: 5, autosize: {type: "fit-x", contains: "content", resize: true},
      signals: [{name: "hidden", value: []},
                {name: "width", init: "containerSize()[0]", on: [{events: "window:resize", update: "containerSize()[0]"}]}],
      data: [
        {name: "rows", values: rows, transform: [{type: "filter", expr: visible}]},
        {name: "markers", values: markers, transform: [{type: "filter", expr: visible}]}
      ],
      scales: [
        {name: "x", type: "linear", domain: {data: "rows", field: "x"}, range: "width", zero: false, nice: true},
        {name: "y", type: "linear", domain: {data: "rows", field: "y"}, range: "height", zero: false, nice: true},
        {name: "colour", type: "ordinal", domain: names, range: colours},
        {name: "dash", type: "ordinal", domain: names, range: dashes},
        {name: "shape", type: "ordinal", domain: names, range: shapes}
      ],
      axes: [
        {orient: "bottom", scale: "x", title: sec.x, grid: true, labelFontSize: 12, titleFontSize: 12},
        {orient: "left", scale: "y", title: sec.y, grid: true, labelFontSize: 12, titleFontSize: 12}
      ],
      legends: [{stroke: "colour", strokeDash: "dash", title: "click to show or hide", symbolType: "stroke", direction: "horizontal",
                 symbolStrokeWidth: 2, symbolLimit: names.length, columns: Math.max(1, Math.ceil(names.length / 22)), labelLimit: 180,
                 labelFontSize: 12, titleFontSize: 12,
                 encode: {symbols: {name: "legend-symbol", interactive: true,
                                    update: {opacity: {signal: "indexof(hidden, datum.value) < 0 ? 1 : 0.2"}}},
                          labels: {name: "legend-label", interactive: true,
                                   update: {opacity: {signal: "indexof(hidden, datum.value) < 0 ? 1 : 0.4"}}}}}],
      marks: [
        {type: "group", from: {facet: {name: "series", data: "rows", groupby: "n"}},
         encode: {update: {width: {signal: "width"}, height: {signal: "height"}}},
         marks: [{type: "line", from: {data: "series"}, interactive: false,
                  encode: {update: enc({stroke: {scale: "colour", field: "n"}, strokeDash: {scale: "dash", field: "n"},
                                        strokeWidth: {value: 2}, interpolate: {field: "i"}})}}]},
        {type: "symbol", from: {data: "markers"}, interactive: false,
         encode: {update: enc({fill: {scale: "colour", field: "n"}, shape: {scale: "shape", field: "n"}, size: {value: 50}})}},
        {type: "symbol", name: "hover", from: {data: "rows"},
         encode: {update: enc({fill: {scale: "colour", field: "n"}, size: {value: 80}, opacity: {value: 0},
                               tooltip: {signal: "{'series': datum.n, " + JSON.stringify(sec.x) + ": format(datum.x, '.4f'), " +
                                                 JSON.stringify(sec.y) + ": format(datum.y, '.4f')}"}}),
                  hover: {opacity: {value: 1}}}}
      ]
    };
    var embedded = window.vegaEmbed(div, spec, {mode: "vega", renderer: "canvas",
                                                actions: {export: true, source: false, compiled: false, editor: false}})
      .then(function (result) {
        var view = result.view;
        charts[id] = view;
        view.addEventListener("click", function (event, item) {
          var role = item && item.mark && item.mark.name;
          if (role !== "legend-symbol" && role !== "legend-label") return;
          var hidden = view.signal("hidden").slice();
          var at = hidden.indexOf(item.datum.value);
          if (at < 0) hidden.push(item.datum.value); else hidden.splice(at, 1);
          view.signal("hidden", hidden).runAsync();
        });
        return view;
      });
    drawn.push(embedded);
    notes(section, sec.notes);
  }

  var main = document.getElementById("report");
  var drawn = [];  // vega-embed's promises: the page is ready when every chart is drawn
  var charts = window.assayCharts = {};  // chart id -> its Vega view (read by the browser tests)
  sources();
  data.sections.forEach(function (sec, i) {
    if (sec.type === "table") table(sec, i, main);
    else chart(sec, i, main);
  });
  // Ready when every chart is drawn and the next frame (the tables' layout and paint) is done: the callback of
  // a timer set in requestAnimationFrame runs after that frame is rendered.
  Promise.all(drawn).then(function () {
    window.assayDrawnMs = performance.now();  // the script's work done (tables in the DOM, charts painted)
    requestAnimationFrame(function () {
      setTimeout(function () {
        window.assayReadyMs = performance.now();  // read by bench/bench_report.py
        document.body.setAttribute("data-ready", "1");
      }, 0);
    });
  });
})();
