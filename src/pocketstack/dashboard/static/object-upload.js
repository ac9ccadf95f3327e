// Object upload with a progress bar: PUT the file's bytes with XMLHttpRequest, whose upload
// events move the bar. The dashboard passes the bytes on to object storage as they arrive.
(function () {
  "use strict";
  var form = document.getElementById("object-upload-form");
  if (!form) { return; }
  var bar = document.getElementById("upload-progress");
  var status = document.getElementById("upload-status");
  var error = document.getElementById("upload-error");
  var button = form.querySelector("button[type=submit]");

  function fail(message) {
    error.textContent = message;
    error.hidden = false;
    status.textContent = "";
    button.disabled = false;
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = document.getElementById("object-file").files[0];
    if (!file) { fail("Choose a file."); return; }
    var name = form.getAttribute("data-folder") +
      (document.getElementById("object-name").value || file.name);
    error.hidden = true;
    button.disabled = true;
    bar.value = 0;
    status.textContent = "Sending the file…";
    var xhr = new XMLHttpRequest();
    xhr.open("PUT", form.action + "?name=" + encodeURIComponent(name));
    xhr.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    xhr.setRequestHeader("X-CSRF-Token", form.getAttribute("data-csrf"));
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) {
        bar.max = e.total;
        bar.value = e.loaded;
        status.textContent = Math.floor(e.loaded * 100 / e.total) + "% sent";
      }
    });
    xhr.addEventListener("load", function () {
      var body;
      try { body = JSON.parse(xhr.responseText); } catch (e) { body = {}; }
      if (xhr.status !== 200) { fail(body.error || ("Upload failed: " + xhr.status)); return; }
      bar.value = bar.max;
      status.textContent = "Uploaded.";
      window.location.assign(body.location);
    });
    xhr.addEventListener("error", function () { fail("The upload broke off."); });
    xhr.send(file);
  });
})();
