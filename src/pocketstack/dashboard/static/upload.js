// Image upload with a progress bar: create the image record (POST, the form's fields), then
// PUT the file's bytes with XMLHttpRequest, whose upload events move the bar. The dashboard
// passes the bytes on to the image service as they arrive.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  if (!form) { return; }
  var bar = document.getElementById("upload-progress");
  var status = document.getElementById("upload-status");
  var error = document.getElementById("upload-error");

  function fail(message) {
    error.textContent = message;
    error.hidden = false;
    status.textContent = "";
    form.querySelector("button[type=submit]").disabled = false;
  }

  function answer(xhr) {
    try { return JSON.parse(xhr.responseText); } catch (e) { return {}; }
  }

  function send(file, target) {
    var xhr = new XMLHttpRequest();
    xhr.open("PUT", target);
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
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

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = document.getElementById("image-file").files[0];
    if (!file) { fail("Choose a file."); return; }
    error.hidden = true;
    form.querySelector("button[type=submit]").disabled = true;
    bar.value = 0;
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
      status.textContent = "Sending the file…";
      send(file, body.upload);
    });
    xhr.addEventListener("error", function () { fail("The dashboard did not answer."); });
    xhr.send(fields.toString());
  });
})();
