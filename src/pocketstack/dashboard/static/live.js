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

// A server's long action (boot, resize, reboot ...) on its page: its status and task as
// they go, then the result, or the fault, without a reload.
(function () {
  "use strict";
  var live = document.querySelector("[data-server-live]");
  if (!live) { return; }
  var FINAL = ["ACTIVE", "SHUTOFF", "ERROR", "VERIFY_RESIZE", "PAUSED", "SUSPENDED",
               "SHELVED", "SHELVED_OFFLOADED", "RESCUE", "SOFT_DELETED", "DELETED"];
  var status = document.getElementById("server-status");
  var task = document.getElementById("server-progress");
  var url = document.body.getAttribute("data-prefix") + "/servers/" +
    encodeURIComponent(live.getAttribute("data-server-live")) + "/progress";

  function busy(s, t) { return Boolean(t) || FINAL.indexOf(s) < 0; }
  if (!busy(live.getAttribute("data-status"), live.getAttribute("data-task"))) { return; }

  function finish(text, failed) {
    task.textContent = text + " ";
    task.className = failed ? "failed" : "status-ACTIVE";
    var again = document.createElement("a");
    again.href = window.location.pathname;
    again.textContent = "Reload for its actions and the new waterfall.";
    task.appendChild(again);
    clearInterval(timer);
  }

  function refresh() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) {
        if (r.status === 404) { finish("The server is gone.", false); return null; }
        return r.ok ? r.json() : null;
      })
      .then(function (s) {
        if (!s) { return; }
        status.textContent = s.status;
        status.className = "status-" + s.status;
        if (busy(s.status, s.task_state)) {
          task.textContent = (s.task_state || s.status.toLowerCase()) +
            (s.progress ? " (" + s.progress + "%)" : "") + "…";
        } else if (s.status === "ERROR") {
          finish("Failed: " + (s.fault || "no fault recorded") + ".", true);
        } else {
          finish("Done: " + s.status + ".", false);
        }
      })
      .catch(function () { /* the next tick tries again */ });
  }
  var timer = setInterval(refresh, 1000);
})();

// The volumes, snapshots or backups on a page: their statuses while one is being created,
// attached, backed up or deleted, until none is in a transitional status.
(function () {
  "use strict";
  var table = document.querySelector("[data-live-statuses]");
  if (!table) { return; }
  var cells = table.querySelectorAll("[data-live-status]");
  var BUSY = ["creating", "downloading", "attaching", "detaching", "deleting", "extending",
              "reserved", "backing-up", "restoring", "restoring-backup", "uploading",
              "retyping", "maintenance"];
  var marker = new URLSearchParams(window.location.search).get("marker");
  var url = table.getAttribute("data-live-statuses") +
    (marker ? "?marker=" + encodeURIComponent(marker) : "");
  var note = document.getElementById("live-note");

  function anyBusy() {
    return Array.prototype.some.call(cells, function (c) {
      return BUSY.indexOf(c.textContent.trim()) >= 0;
    });
  }
  if (!anyBusy()) { return; }

  function refresh() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (statuses) {
        if (!statuses) { return; }
        cells.forEach(function (cell) {
          var status = statuses[cell.getAttribute("data-live-status")] || "deleted";
          if (cell.textContent.trim() !== status) {
            cell.textContent = status;
            cell.className = status.indexOf("error") === 0 ? "failed" : "";
            if (note) { note.hidden = false; }
          }
        });
        if (!anyBusy()) { clearInterval(timer); }
      })
      .catch(function () { /* the next tick tries again */ });
  }
  var timer = setInterval(refresh, 1000);
})();
