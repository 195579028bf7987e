// Jobs, newest first: a search by recipient or webhook host, subject, a date range, type and status,
// with live rows, exports and the recovery of failed ones. Every value is the tenant's or a
// recipient's text: shown with textContent only (dom.js).
import { api, ApiError } from "./api.js";
import { badge, field, h, replace, toast, when, zoneName } from "./dom.js";
import { act, go, link, rerender } from "./app.js";
import { ErrorEnvelope, JobPage, ListedJob, Pagination, RecoverRequest, Recovery } from "./fields.js";

const LIMIT = 20;
const DAY_MS = 24 * 3600 * 1000;
// Rows still moving: the page polls its data while one is shown.
const IN_FLIGHT = new Set(["scheduled", "pending", "processing"]);
const POLL_MS = 4000;
const STATUSES = ["scheduled", "pending", "processing", "completed", "failed", "cancelled"];

export async function jobsPage() {
  const filters = filtersOf(new URLSearchParams(location.search));
  const parameters = apiParameters(filters);
  const form = filterForm(filters);
  const results = h("div", { class: "job-results" });
  const heading = h("p", { class: "muted", "aria-live": "polite" });
  let listing;
  try {
    listing = await api("GET", `/notifications/jobs?${parameters}`);
  } catch (error) {
    // A filter the API refuses keeps the page and the form, the API's own words next to it.
    if (!(error instanceof ApiError) || error.status !== 400) throw error;
    replace(results, h("p", { class: "form-error", role: "alert" }, error.message));
    return h("div", {}, h("header", { class: "page-head" }, h("h1", {}, "Jobs")), form, results);
  }
  show(results, heading, listing, filters);
  const page = h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Jobs"), heading),
    form,
    filters.status === "failed" ? recoverForm(filters.type) : null,
    results);
  follow(page, results, heading, parameters, filters);
  return page;
}

// The URL's query (what a link or the form chose) as filters; the range defaults to the last 7
// days, in the browser's time zone.
function filtersOf(query) {
  const today = localDate(new Date());
  const day = query.get("day") || "";
  return {
    find: query.get("find") || "",
    subject: query.get("subject") || "",
    from: query.get("from") || day || localDate(new Date(Date.now() - 6 * DAY_MS)),
    to: query.get("to") || day || today,
    type: query.get("type") || "",
    status: query.get("status") || "",
    cursor: query.get("cursor") || "",
  };
}

// The API's parameters: an @ in the search box means a recipient, anything else a webhook host.
function apiParameters(filters) {
  const parameters = new URLSearchParams({ limit: String(LIMIT) });
  const find = filters.find.trim();
  if (find) parameters.set(find.includes("@") ? "recipient" : "host", find);
  if (filters.subject.trim()) parameters.set("subject", filters.subject.trim());
  if (filters.from) parameters.set("since", startOf(filters.from));
  if (filters.to) parameters.set("until", startOf(filters.to, 1));
  for (const name of ["type", "status", "cursor"]) if (filters[name]) parameters.set(name, filters[name]);
  return parameters;
}

// Midnight of a YYYY-MM-DD date (plus ``days``) in the browser's zone, as RFC 3339 UTC.
function startOf(date, days = 0) {
  const [year, month, day] = date.split("-").map(Number);
  return new Date(year, month - 1, day + days).toISOString();
}

function localDate(moment) {
  return new Date(moment.getTime() - moment.getTimezoneOffset() * 60000).toISOString().slice(0, 10);
}

function show(results, heading, listing, filters) {
  const jobs = listing[JobPage.data];
  const next = listing[JobPage.pagination][Pagination.nextCursor];
  // The count is what the table shows: counters trail a moment behind what just changed.
  heading.textContent = `${jobs.length} job${jobs.length === 1 ? "" : "s"} shown${next ? ", more on the next page" : ""}`;
  replace(results,
    jobs.length ? jobTable(jobs) : h("p", { class: "empty" }, emptyText(filters)),
    pager(filters, next));
}

function emptyText(filters) {
  const searched = filters.find || filters.subject || filters.type || filters.status;
  const what = [filters.status, filters.type].filter(Boolean).join(" ") || "";
  if (searched) return `No ${what ? `${what} ` : ""}jobs match this search between ${filters.from} and ${filters.to}.`;
  return `No jobs between ${filters.from} and ${filters.to}. Send one with the API and it appears here.`;
}

// While a shown row is scheduled, pending or processing, read the page again every few seconds
// (only while the tab is visible); stop once none is, or once the console shows another page.
function follow(page, results, heading, parameters, filters) {
  const address = location.href;
  const tick = async () => {
    if (!page.isConnected || location.href !== address) return;
    if (!results.querySelector("[data-in-flight]")) return;
    if (document.visibilityState === "visible") {
      try {
        show(results, heading, await api("GET", `/notifications/jobs?${parameters}`), filters);
      } catch {
        return; // the next visit shows the error; a background refresh stays quiet
      }
    }
    setTimeout(tick, POLL_MS);
  };
  setTimeout(tick, POLL_MS);
}

function select(name, options, value) {
  return h("select", { name }, options.map(([optionValue, text]) =>
    h("option", { value: optionValue, selected: optionValue === value }, text)));
}

function filterForm(filters) {
  const find = h("input", { type: "search", name: "find", value: filters.find, placeholder: "ana@example.com or hooks.example.com", autocomplete: "off" });
  const subject = h("input", { type: "search", name: "subject", value: filters.subject, maxlength: "120" });
  const from = h("input", { type: "date", name: "from", value: filters.from });
  const to = h("input", { type: "date", name: "to", value: filters.to });
  const type = select("type", [["", "Any type"], ["email", "Email"], ["webhook", "Webhook"]], filters.type);
  const status = select("status", [["", "Any status"], ...STATUSES.map((name) => [name, name[0].toUpperCase() + name.slice(1)])], filters.status);
  const zone = zoneName();
  const chosen = () => {
    const query = new URLSearchParams();
    for (const input of [find, subject, from, to, type, status]) if (input.value.trim()) query.set(input.name, input.value.trim());
    return query;
  };
  return h("form", {
    class: "filters",
    role: "search",
    "aria-label": "Search jobs",
    onsubmit: (event) => {
      event.preventDefault();
      go(`/console/jobs?${chosen()}`);
    },
  }, field("Recipient or host", find), field("Subject contains", subject),
  field(`From (${zone})`, from), field(`To, inclusive (${zone})`, to),
  field("Type", type), field("Status", status),
  h("button", { type: "submit", class: "button" }, "Search"),
  h("a", { href: "/console/jobs", "data-route": "", class: "button button-quiet" }, "Clear"),
  h("div", { class: "export" },
    exportButton("Export CSV", "csv", () => apiParameters(filtersOf(chosen()))),
    exportButton("Export JSON lines", "jsonl", () => apiParameters(filtersOf(chosen())))));
}

// Downloads what the search finds, every part of it (the API answers at most 1 000 rows a call
// and names the next part in X-Next-Cursor), as one file.
function exportButton(label, format, parametersOf) {
  const button = h("button", {
    type: "button",
    class: "button button-quiet",
    onclick: async () => {
      button.disabled = true;
      try {
        const parts = await exportParts(format, parametersOf());
        const body = format === "csv" ? parts.map((part, index) => (index ? part.slice(part.indexOf("\n") + 1) : part)).join("") : parts.join("");
        save(new Blob([body], { type: format === "csv" ? "text/csv" : "application/x-ndjson" }), `herald-jobs.${format}`);
      } catch (error) {
        toast(error instanceof ApiError ? error.message : "The export failed.", "error");
      } finally {
        button.disabled = false;
      }
    },
  }, label);
  return button;
}

async function exportParts(format, parameters) {
  parameters.delete("limit");
  parameters.delete("cursor");
  parameters.set("format", format);
  const parts = [];
  let cursor = "";
  do {
    if (cursor) parameters.set("cursor", cursor);
    let answer;
    try {
      answer = await fetch(`/api/v1/notifications/jobs/export?${parameters}`, { credentials: "same-origin" });
    } catch {
      throw new ApiError(0, { [ErrorEnvelope.error]: "Herald could not be reached; check the connection and retry." });
    }
    if (!answer.ok) throw new ApiError(answer.status, await answer.json().catch(() => null));
    parts.push(await answer.text());
    cursor = answer.headers.get("X-Next-Cursor") || "";
  } while (cursor);
  return parts;
}

function save(blob, name) {
  const address = URL.createObjectURL(blob);
  const anchor = h("a", { href: address, download: name, hidden: true });
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(address), 10000);
}

// Re-queue every failed job accepted since a time, as POST /notifications/jobs/recover does (up to
// 1 000 a call: the form follows nextCursor until all are queued).
function recoverForm(type) {
  const since = h("input", { type: "datetime-local", name: "since", required: true, value: localInput(new Date(Date.now() - DAY_MS)) });
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Re-queue failed jobs");
  return h("form", {
    class: "card recover",
    "aria-label": "Recover failed jobs",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const body = { [RecoverRequest.since]: new Date(since.value).toISOString(), ...(type ? { [RecoverRequest.type]: type } : {}) };
      let requeued = 0;
      let cursor;
      do {
        const result = await act(() => api("POST", "/notifications/jobs/recover", cursor ? { ...body, [RecoverRequest.cursor]: cursor } : body));
        if (!result) {
          submit.disabled = false;
          return;
        }
        requeued += result[Recovery.requeued];
        cursor = result[Recovery.nextCursor];
      } while (cursor);
      toast(`${requeued} failed job${requeued === 1 ? "" : "s"} re-queued`, "success");
      rerender();
    },
  }, h("h2", {}, "Recover"),
  h("p", { class: "muted" }, "Queue the failed jobs again once what failed them is fixed. Their attempts go on counting; nothing is charged again."),
  field(`Failed jobs accepted since (${zoneName()})`, since), submit);
}

function localInput(moment) {
  return new Date(moment.getTime() - moment.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

export function attempts(count) {
  return count === 0 ? "none yet" : `${count} attempt${count === 1 ? "" : "s"}`;
}

function jobTable(jobs) {
  return h("table", { class: "table" },
    h("thead", {}, h("tr", {}, ["Job", "Type", "Recipient / URL", "Status", "Attempts", "Accepted", "Last error"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, jobs.map((job) => h("tr", { "data-in-flight": IN_FLIGHT.has(job[ListedJob.status]) ? "" : null },
      h("td", {}, link(`/console/jobs/${encodeURIComponent(job[ListedJob.id])}`, h("code", {}, job[ListedJob.id].slice(0, 8)), h("span", { class: "visually-hidden" }, ` job ${job[ListedJob.id]}`))),
      h("td", {}, job[ListedJob.type]),
      h("td", { class: "target" },
        h("span", {}, job[ListedJob.recipient] || job[ListedJob.url] || "—"),
        job[ListedJob.subject] ? h("span", { class: "muted subject" }, job[ListedJob.subject]) : null),
      h("td", {}, badge(job[ListedJob.status])),
      h("td", {}, attempts(job[ListedJob.attempts])),
      h("td", {}, when(job[ListedJob.createdAt])),
      h("td", { class: "error-text" }, job[ListedJob.errorMessage] || "")))));
}

function pager(filters, next) {
  const at = (cursor) => {
    const query = new URLSearchParams(Object.entries({ ...filters, cursor }).filter(([, value]) => value));
    return `/console/jobs?${query}`;
  };
  return h("nav", { class: "pager", "aria-label": "Pages" },
    filters.cursor ? link(at(""), "← Newest") : h("span", {}),
    next ? link(at(next), "Older →") : h("span", {}));
}
