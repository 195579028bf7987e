// Jobs, newest first, and one job's timeline: attempts with every provider tried, the provider's
// events, and the suppression that followed. All of it is the tenant's or a recipient's text:
// shown with textContent only (dom.js).
import { api, ApiError } from "./api.js";
import { badge, field, h, replace, toast, when } from "./dom.js";
import { act, go, link, rerender } from "./app.js";

const LIMIT = 20;

export async function jobsPage() {
  const query = new URLSearchParams(location.search);
  const filters = { type: query.get("type") || "", status: query.get("status") || "", day: query.get("day") || "" };
  const page = Number(query.get("page") || 1);
  const parameters = new URLSearchParams({ limit: String(LIMIT), page: String(page) });
  for (const [name, value] of Object.entries(filters)) if (value) parameters.set(name, value);
  const listing = await api("GET", `/notifications/jobs?${parameters}`);
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Jobs"),
      h("p", { class: "muted" }, `${listing.pagination.total}${listing.pagination.totalIsLowerBound ? "+" : ""} job${listing.pagination.total === 1 ? "" : "s"}`)),
    filterForm(filters),
    filters.status === "failed" ? recoverForm(filters.type) : null,
    listing.data.length ? jobTable(listing.data) : h("p", { class: "empty" }, "No jobs match these filters yet. Send one with the API and it appears here."),
    pager(page, listing.pagination, filters));
}

function select(name, options, value) {
  return h("select", { name }, options.map(([optionValue, label]) =>
    h("option", { value: optionValue, selected: optionValue === value }, label)));
}

function filterForm(filters) {
  const type = select("type", [["", "Any type"], ["email", "Email"], ["webhook", "Webhook"]], filters.type);
  const status = select("status", [["", "Any status"], ["scheduled", "Scheduled"], ["pending", "Pending"],
    ["processing", "Processing"], ["completed", "Completed"], ["failed", "Failed"], ["cancelled", "Cancelled"]], filters.status);
  const dayInput = h("input", { type: "date", name: "day", value: filters.day });
  return h("form", {
    class: "filters",
    role: "search",
    "aria-label": "Filter jobs",
    onsubmit: (event) => {
      event.preventDefault();
      const chosen = new URLSearchParams();
      for (const input of [type, status, dayInput]) if (input.value) chosen.set(input.name, input.value);
      go(`/console/jobs${chosen.size ? `?${chosen}` : ""}`);
    },
  }, field("Type", type), field("Status", status), field("Accepted on (UTC)", dayInput),
  h("button", { type: "submit", class: "button" }, "Apply"),
  h("a", { href: "/console/jobs", "data-route": "", class: "button button-quiet" }, "Clear"));
}

// Re-queue every failed job accepted since a time, as POST /notifications/jobs/recover does (up to
// 1 000 a call: the form follows nextCursor until all are queued).
function recoverForm(type) {
  const since = h("input", { type: "datetime-local", name: "since", required: true, value: localInput(new Date(Date.now() - 24 * 3600 * 1000)) });
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Re-queue failed jobs");
  return h("form", {
    class: "card recover",
    "aria-label": "Recover failed jobs",
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const body = { since: new Date(since.value).toISOString(), ...(type ? { type } : {}) };
      let requeued = 0;
      let cursor;
      do {
        const result = await act(() => api("POST", "/notifications/jobs/recover", cursor ? { ...body, cursor } : body));
        if (!result) {
          submit.disabled = false;
          return;
        }
        requeued += result.requeued;
        cursor = result.nextCursor;
      } while (cursor);
      toast(`${requeued} failed job${requeued === 1 ? "" : "s"} re-queued`, "success");
      rerender();
    },
  }, h("h2", {}, "Recover"),
  h("p", { class: "muted" }, "Queue the failed jobs again once what failed them is fixed. Their attempts go on counting; nothing is charged again."),
  field("Failed jobs accepted since", since), submit);
}

function localInput(moment) {
  const local = new Date(moment.getTime() - moment.getTimezoneOffset() * 60000);
  return local.toISOString().slice(0, 16);
}

function jobTable(jobs) {
  return h("table", { class: "table" },
    h("thead", {}, h("tr", {}, ["Job", "Type", "Status", "Attempts", "Accepted", "Last error"].map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, jobs.map((job) => h("tr", {},
      h("td", {}, link(`/console/jobs/${encodeURIComponent(job.id)}`, h("code", {}, job.id.slice(0, 8)), h("span", { class: "visually-hidden" }, ` job ${job.id}`))),
      h("td", {}, job.type),
      h("td", {}, badge(job.status)),
      h("td", {}, `${job.attempts} / ${job.maxAttempts}`),
      h("td", {}, when(job.createdAt)),
      h("td", { class: "error-text" }, job.errorMessage || "")))));
}

function pager(page, pagination, filters) {
  const at = (number) => {
    const query = new URLSearchParams({ ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)), page: String(number) });
    return `/console/jobs?${query}`;
  };
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? link(at(page - 1), "← Newer") : h("span", {}),
    h("span", { class: "muted" }, `Page ${page} of ${Math.max(1, pagination.totalPages)}`),
    page < pagination.totalPages ? link(at(page + 1), "Older →") : h("span", {}));
}

export async function jobPage(jobId) {
  let job;
  try {
    job = await api("GET", `/notifications/jobs/${encodeURIComponent(jobId)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return h("div", { class: "error-page" }, h("h1", {}, "Job not found"),
        h("p", {}, "No job of this account has this id."), link("/console/jobs", "All jobs"));
    }
    throw error;
  }
  const suppressions = job.type === "email" ? await api("GET", "/account/suppressions") : [];
  const recipient = job.payload?.to?.toLowerCase();
  const suppression = suppressions.find((entry) => entry.email === recipient);
  return h("div", {},
    h("p", { class: "crumbs" }, link("/console/jobs", "Jobs"), " / ", h("code", {}, job.id)),
    h("header", { class: "page-head" },
      h("h1", {}, job.type === "email" ? "Email" : "Webhook", " ", badge(job.status)),
      job.status === "failed" ? h("button", {
        type: "button",
        class: "button button-primary",
        onclick: async () => {
          if (await act(() => api("POST", `/notifications/jobs/${encodeURIComponent(job.id)}/retry`), "Queued again for delivery")) rerender();
        },
      }, "Retry") : null,
      job.status === "scheduled" ? h("button", {
        type: "button",
        class: "button",
        onclick: async () => {
          if (!confirm("Cancel this scheduled job? It will not be sent.")) return;
          if (await act(() => api("POST", `/notifications/jobs/${encodeURIComponent(job.id)}/cancel`), "Cancelled: it will not be sent")) rerender();
        },
      }, "Cancel") : null),
    h("div", { class: "columns" },
      h("section", { class: "card", "aria-labelledby": "request-title" }, h("h2", { id: "request-title" }, "Request"), requestFacts(job)),
      h("section", { class: "card", "aria-labelledby": "timeline-title" }, h("h2", { id: "timeline-title" }, "Timeline"), timeline(job, suppression))));
}

function facts(rows) {
  return h("dl", { class: "facts" }, rows.filter(([, value]) => value !== undefined && value !== null && value !== "").map(([name, value]) =>
    [h("dt", {}, name), h("dd", {}, value)]));
}

function requestFacts(job) {
  const payload = job.payload || {};
  const common = [["Job id", h("code", {}, job.id)], ["Priority", String(job.priority)], ["Attempts", `${job.attempts} of ${job.maxAttempts}`],
    ["Accepted", when(job.createdAt)], ["Send at", job.sendAt ? when(job.sendAt) : ""],
    ["Ordering key", job.orderingKey ? h("code", {}, job.orderingKey) : ""], ["Started", when(job.startedAt)], ["Finished", job.completedAt ? when(job.completedAt) : ""],
    ["Error", job.errorMessage]];
  if (job.type === "email") {
    return h("div", {}, facts([["To", payload.to], ["From", payload.from], ["Reply to", payload.replyTo], ["Subject", payload.subject], ...common]),
      payload.text ? [h("h3", {}, "Text"), h("pre", { class: "payload" }, payload.text)] : null,
      payload.body ? [h("h3", {}, "HTML (as sent, not rendered)"), h("pre", { class: "payload" }, payload.body)] : null);
  }
  const headers = Object.entries(payload.headers || {});
  return h("div", {}, facts([["URL", payload.url], ["Method", payload.method || "POST"], ...common]),
    headers.length ? [h("h3", {}, "Headers"), h("dl", { class: "facts" }, headers.map(([name, value]) => [h("dt", {}, name), h("dd", {}, h("code", {}, value))]))] : null,
    h("h3", {}, "Payload"), h("pre", { class: "payload" }, JSON.stringify(payload.payload, null, 2)));
}

function timeline(job, suppression) {
  const entries = [{ at: job.createdAt, title: "Accepted", kind: "accepted", body: null }];
  if (job.sendAt) {
    entries.push({ at: job.sendAt, title: job.status === "scheduled" ? "Due to be sent" : "Scheduled time", kind: "accepted", body: null });
  }
  if (job.status === "cancelled") {
    entries.push({ at: job.completedAt, title: "Cancelled before it was sent", kind: "failed", body: null });
  }
  for (const log of job.deliveryLogs) {
    entries.push({
      at: log.createdAt,
      kind: log.status === "success" ? "success" : "failed",
      title: `Attempt ${log.attempt}: ${log.status === "success" ? `delivered via ${log.usedProvider || "the endpoint"}` : "failed"}`,
      body: h("div", {},
        log.errorMessage ? h("p", { class: "error-text" }, log.errorMessage) : null,
        log.providers?.length ? h("ol", { class: "tries" }, log.providers.map((tried) => h("li", {},
          h("strong", {}, tried.provider || "endpoint"), ": ", tried.outcome || "",
          tried.status ? ` (HTTP ${tried.status})` : "", tried.error ? h("span", { class: "error-text" }, ` — ${tried.error}`) : null))) : null),
    });
  }
  for (const event of job.events) {
    entries.push({ at: event.occurredAt, kind: `event-${event.type}`, title: `${event.provider || "Provider"} reported: ${event.type}`,
      body: event.reason ? h("p", { class: "muted" }, event.reason) : null });
  }
  if (suppression) {
    entries.push({ at: suppression.createdAt, kind: "suppressed", title: `Recipient suppressed (${suppression.reason})`,
      body: h("p", { class: "muted" }, "Herald will not send to this address again until it is removed. ", link("/console/suppressions", "Suppressions")) });
  }
  entries.sort((one, other) => String(one.at).localeCompare(String(other.at)));
  return h("ol", { class: "timeline" }, entries.map((entry) => h("li", { class: `tl tl-${entry.kind}` },
    h("p", { class: "tl-title" }, entry.title), h("p", { class: "tl-time" }, when(entry.at)), entry.body)));
}
