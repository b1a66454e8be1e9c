// Scheduler dashboard: progressive enhancement only. Every form works without this file; with it,
// the job's buttons answer in place (fetch) and the history refreshes until the new run shows.
"use strict";
(function () {
  const result = document.getElementById("result");
  const history = document.getElementById("history");
  const stateEl = document.getElementById("job-state");

  function setButtons(state) {
    const set = (id, on) => { const b = document.getElementById(id); if (b) b.disabled = !on; };
    set("run-now", state !== "Completed" && state !== "Faulted");
    set("enable", state === "Disabled");
    set("disable", state === "Enabled");
    set("backfill", state !== "Completed" && state !== "Faulted");
  }

  async function refreshHistory() {
    if (!history) return false;
    const resp = await fetch(history.dataset.fragmentUrl, { headers: { "X-Fragment": "history" }, credentials: "same-origin" });
    if (!resp.ok) return false;
    const html = await resp.text();
    const changed = html.trim() !== history.innerHTML.trim();
    if (changed) history.innerHTML = html;
    return changed;
  }

  // Reload the parts of the job's page that an action changes (facts, calendar, next runs)
  // from the page itself, without a full reload.
  async function refreshParts() {
    const resp = await fetch(location.href, { credentials: "same-origin" });
    if (!resp.ok) return;
    const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
    ["facts", "calendar-section", "next-section"].forEach(function (id) {
      const now = document.getElementById(id);
      const fresh = doc.getElementById(id);
      if (now && fresh) now.replaceWith(document.importNode(fresh, true));
    });
    // The pause line comes and goes with the state (enabled: only a note is left, if any).
    const pause = document.getElementById("pause");
    const freshPause = doc.getElementById("pause");
    if (pause && freshPause) pause.replaceWith(document.importNode(freshPause, true));
    else if (pause) pause.remove();
    else if (freshPause) document.getElementById("schedule").after(document.importNode(freshPause, true));
  }

  // Poll the history every second for up to 30 s, until it changes.
  function watchHistory() {
    const before = history ? history.innerHTML : "";
    let tries = 0;
    const tick = async () => {
      tries++;
      try { await refreshHistory(); } catch (e) { return; }
      if (history && history.innerHTML !== before) return;
      if (tries < 30) setTimeout(tick, 1000);
    };
    setTimeout(tick, 500);
  }

  document.querySelectorAll("form[data-enhance]").forEach(function (form) {
    form.addEventListener("submit", async function (ev) {
      ev.preventDefault();
      const button = form.querySelector("button");
      if (button) button.disabled = true;
      result.classList.remove("error");
      result.textContent = "Working…";
      try {
        const resp = await fetch(form.action, {
          method: "POST",
          body: new URLSearchParams(new FormData(form)),
          headers: { "Accept": "application/json" },
          credentials: "same-origin",
        });
        const data = await resp.json();
        result.textContent = data.message;
        if (!data.ok) result.classList.add("error");
        if (data.state && stateEl) {
          stateEl.textContent = data.state;
          stateEl.dataset.state = data.state;
          stateEl.className = "state state-" + data.state.toLowerCase();
          setButtons(data.state);
        } else if (button) {
          button.disabled = false;
        }
        const next = document.getElementById("next-run");
        if (next && data.state) next.textContent = data.next || "—";
        if (data.ok) refreshParts().catch(function () {});
        if (data.ok && (form.action.endsWith("/run") || form.action.endsWith("/backfill"))) watchHistory();
      } catch (e) {
        result.textContent = "The request failed: " + e;
        result.classList.add("error");
        if (button) button.disabled = false;
      }
    });
  });
})();
