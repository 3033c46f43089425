// a2a-gateway console: live updates. The hop list polls /console/hops/live every 3 s for rows
// newer than the newest looked at (with the page's filters); the overview fetches its figures
// again every few seconds (data-refresh, data-every) and swaps them in, unless the keyboard
// focus is inside them. Everything else works without JavaScript.
(function () {
  "use strict";
  var table = document.getElementById("hops");
  if (table && table.dataset.live) {
    var body = table.tBodies[0];
    var status = document.getElementById("live-status");
    var after = Number(table.dataset.after || "0");
    var sep = table.dataset.live.indexOf("?") >= 0 ? "&" : "?";
    if (status) { status.textContent = "Live: new hops appear at the top."; }
    var poll = function () {
      var next = after;
      fetch(table.dataset.live + sep + "after=" + after, { credentials: "same-origin" })
        .then(function (r) {
          if (r.status === 401) { throw new Error("logged out"); }
          var h = Number(r.headers.get("x-after") || "0");
          if (h > next) { next = h; }
          return r.ok ? r.text() : "";
        })
        .then(function (html) {
          if (html) {
            var empty = body.querySelector("tr.empty");
            if (empty) { empty.remove(); }
            var tpl = document.createElement("template");
            tpl.innerHTML = html;
            var rows = tpl.content.querySelectorAll("tr");
            for (var i = 0; i < rows.length; i++) { rows[i].classList.add("new"); }
            body.insertBefore(tpl.content, body.firstChild);
            var first = body.querySelector("tr[data-seq]");
            if (first && Number(first.dataset.seq) > next) { next = Number(first.dataset.seq); }
            if (status) { status.textContent = rows.length + " new hop(s)."; }
          }
          after = next;
          window.setTimeout(poll, 3000);
        })
        .catch(function () {
          if (status) { status.textContent = "Live updates stopped (reload to resume)."; }
        });
    };
    window.setTimeout(poll, 3000);
  }

  var overview = document.getElementById("overview");
  if (overview && overview.dataset.refresh) {
    var every = 1000 * Math.max(2, Number(overview.dataset.every || "10"));
    var note = document.getElementById("overview-status");
    if (note) { note.textContent = "The figures refresh by themselves every " + every / 1000 + " s."; }
    var refresh = function () {
      if (overview.contains(document.activeElement) && document.activeElement !== overview) {
        window.setTimeout(refresh, every);
        return;
      }
      fetch(overview.dataset.refresh, { credentials: "same-origin" })
        .then(function (r) {
          if (r.status === 401) { throw new Error("logged out"); }
          return r.ok ? r.text() : null;
        })
        .then(function (html) {
          if (html !== null) { overview.innerHTML = html; }
          window.setTimeout(refresh, every);
        })
        .catch(function () {
          if (note) { note.textContent = "Live updates stopped (reload to resume)."; }
        });
    };
    window.setTimeout(refresh, every);
  }
})();
