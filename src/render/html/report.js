(function () {
  "use strict";
  var frames = function () { return document.querySelectorAll("details.f"); };
  var setAll = function (open) {
    frames().forEach(function (d) { d.open = open; });
  };
  var b = document.getElementById("ct-expand");
  if (b) b.addEventListener("click", function () { setAll(true); });
  b = document.getElementById("ct-collapse");
  if (b) b.addEventListener("click", function () { setAll(false); });
  // Printing shows every frame; the reader's choice comes back afterwards.
  var saved = null;
  window.addEventListener("beforeprint", function () {
    saved = [];
    frames().forEach(function (d) { saved.push(d.open); d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    if (!saved) return;
    frames().forEach(function (d, i) { d.open = saved[i]; });
    saved = null;
  });
})();
