// Live server status: every few seconds, ask the dashboard for the statuses of the servers
// on this page and update their cells in place. No framework, no build step.
(function () {
  "use strict";
  var cells = document.querySelectorAll("[data-server-status]");
  if (!cells.length) { return; }
  // The statuses of this page's servers: the same marker as the page.
  var marker = new URLSearchParams(window.location.search).get("marker");
  var url = document.body.getAttribute("data-prefix") + "/servers/status" +
    (marker ? "?marker=" + encodeURIComponent(marker) : "");

  function refresh() {
    if (document.hidden) { return; }
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (statuses) {
        if (!statuses) { return; }
        cells.forEach(function (cell) {
          var status = statuses[cell.getAttribute("data-server-status")];
          if (status && cell.textContent !== status) {
            cell.textContent = status;
            cell.className = "status-" + status;
          }
        });
      })
      .catch(function () { /* the next tick tries again */ });
  }
  setInterval(refresh, 2000);
})();
