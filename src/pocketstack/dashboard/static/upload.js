// Uploads with a progress bar, for the images page (create the image record with the
// form's fields, then send the file) and the objects page (send the file): the bytes go
// by PUT with XMLHttpRequest, whose upload events move the bar, and the dashboard passes
// them on to the image service or object storage as they arrive.
(function () {
  "use strict";
  var form = document.getElementById("upload-form") ||
    document.getElementById("object-upload-form");
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

  function answer(xhr) {
    try { return JSON.parse(xhr.responseText); } catch (e) { return {}; }
  }

  function send(file, target, contentType) {
    status.textContent = "Sending the file…";
    var xhr = new XMLHttpRequest();
    xhr.open("PUT", target);
    xhr.setRequestHeader("Content-Type", contentType);
    xhr.setRequestHeader("X-CSRF-Token", form.getAttribute("data-csrf"));
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) {
        bar.max = e.total;
        bar.value = e.loaded;
        status.textContent = Math.floor(e.loaded * 100 / e.total) + "% sent";
      }
    });
    xhr.addEventListener("load", function () {
      var body = answer(xhr);
      if (xhr.status !== 200) { fail(body.error || ("Upload failed: " + xhr.status)); return; }
      bar.value = bar.max;
      status.textContent = "Uploaded.";
      window.location.assign(body.location);
    });
    xhr.addEventListener("error", function () { fail("The upload broke off."); });
    xhr.send(file);
  }

  function createImage(file) {
    status.textContent = "Creating the image…";
    var fields = new URLSearchParams();
    ["csrf_token", "name", "disk_format", "container_format", "visibility"].forEach(
      function (name) { fields.append(name, form.elements[name].value); });
    var xhr = new XMLHttpRequest();
    xhr.open("POST", form.action);
    xhr.setRequestHeader("Content-Type", "application/x-www-form-urlencoded");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.addEventListener("load", function () {
      var body = answer(xhr);
      if (xhr.status !== 201) { fail(body.error || ("Failed: " + xhr.status)); return; }
      send(file, body.upload, "application/octet-stream");
    });
    xhr.addEventListener("error", function () { fail("The dashboard did not answer."); });
    xhr.send(fields.toString());
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var isObject = form.id === "object-upload-form";
    var file = document.getElementById(isObject ? "object-file" : "image-file").files[0];
    if (!file) { fail("Choose a file."); return; }
    error.hidden = true;
    button.disabled = true;
    bar.value = 0;
    if (!isObject) { createImage(file); return; }
    var name = form.getAttribute("data-folder") +
      (document.getElementById("object-name").value || file.name);
    send(file, form.action + "?name=" + encodeURIComponent(name),
         file.type || "application/octet-stream");
  });
})();
