// a2a-gateway console: live updates of the hop list (polls /console/hops/live every 3 s
// for rows newer than the newest shown). Everything else works without JavaScript.
(function () {
  "use strict";
  var table = document.getElementById("hops");
  if (!table || !table.dataset.live) { return; }
  var body = table.tBodies[0];
  var status = document.getElementById("live-status");
  var after = Number(table.dataset.after || "0");
  var sep = table.dataset.live.indexOf("?") >= 0 ? "&" : "?";
  if (status) { status.textContent = "Live: new hops appear at the top."; }
  function poll() {
    fetch(table.dataset.live + sep + "after=" + after, { credentials: "same-origin" })
      .then(function (r) {
        if (r.status === 401) { throw new Error("logged out"); }
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
          if (first) { after = Number(first.dataset.seq); }
          if (status) { status.textContent = rows.length + " new hop(s)."; }
        }
        window.setTimeout(poll, 3000);
      })
      .catch(function () {
        if (status) { status.textContent = "Live updates stopped (reload to resume)."; }
      });
  }
  window.setTimeout(poll, 3000);
})();
