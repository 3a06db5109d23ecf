// Light progressive enhancement: every page works without this file.
"use strict";

function setupCopyButtons() {
  document.querySelectorAll("[data-copy-target]").forEach(function (button) {
    button.addEventListener("click", function () {
      var target = document.getElementById(button.dataset.copyTarget);
      var status = document.getElementById(button.dataset.copyStatus || "");
      if (!target) return;
      var say = function (text) { if (status) status.textContent = text; };
      var fallback = function () {
        target.focus();
        target.select();
        say(document.execCommand && document.execCommand("copy") ? "Copied." : "Selected: press Ctrl+C (or ⌘C) to copy.");
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(target.value).then(function () { say("Copied."); }, fallback);
      } else {
        fallback();
      }
    });
  });
}

function setupConfirmations() {
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });
}

function describeSignal(signal, categories) {
  var category = categories[signal.category] || signal.category;
  var parts = [category, signal.intent_level, signal.industry, [signal.city, signal.state].filter(Boolean).join(", ")];
  return parts.filter(Boolean).join(" · ") + (signal.summary ? " — " + signal.summary : "");
}

// Ids of the signals already on the page: the table's rows and the list's items.
function shownSignals() {
  var shown = {};
  document.querySelectorAll("[data-signal-id]").forEach(function (element) { shown[element.dataset.signalId] = true; });
  return shown;
}

function setupSignalFeed() {
  var feed = document.getElementById("signal-feed");
  var status = document.getElementById("feed-status");
  if (!feed || !feed.dataset.stream) return;
  if (!window.EventSource) {
    status.textContent = "This browser cannot show the live view.";
    return;
  }
  var failures = 0;
  var categories = {};
  try { categories = JSON.parse(feed.dataset.categories || "{}"); } catch (e) { categories = {}; }
  var shown = shownSignals();
  var source = new EventSource(feed.dataset.stream);
  source.addEventListener("open", function () { failures = 0; status.textContent = "Live: new signals appear at the top."; });
  source.addEventListener("signal", function (event) {
    var signal;
    try { signal = JSON.parse(event.data); } catch (e) { return; }
    if (shown[signal.id]) return;  // in the table already, or listed before a reconnection
    shown[signal.id] = true;
    var item = document.createElement("li");
    item.dataset.signalId = signal.id;
    item.textContent = describeSignal(signal, categories);
    feed.insertBefore(item, feed.firstChild);
    while (feed.children.length > 200) feed.removeChild(feed.lastChild);
  });
  // The server ends the feed for good when the session or the account no longer allows it.
  source.addEventListener("closed", function (event) {
    source.close();
    var detail = "";
    try { detail = JSON.parse(event.data).detail || ""; } catch (e) { detail = ""; }
    status.textContent = "The live view has ended. " + detail;
  });
  source.addEventListener("error", function () {
    failures += 1;
    if (failures >= 3) {
      source.close();
      status.textContent = "The live view is unavailable right now. Reload the page to try again.";
    } else {
      status.textContent = "Reconnecting…";
    }
  });
}

document.addEventListener("DOMContentLoaded", function () {
  setupCopyButtons();
  setupConfirmations();
  setupSignalFeed();
});
