// Jobs, newest first, and one job's timeline: attempts with every provider tried, the provider's
// events, and the suppression that followed. All of it is the tenant's or a recipient's text:
// shown with textContent only (dom.js).
import { api, ApiError } from "./api.js";
import { badge, field, h, replace, toast, when } from "./dom.js";
import { act, go, link, rerender } from "./app.js";
import {
  DeliveryEvent, DeliveryLog, EmailRequest, Job, JobPage, JobSummary, Pagination, ProviderTry, RecoverRequest, Recovery, Suppression,
  WebhookRequest,
} from "./fields.js";

const LIMIT = 20;

export async function jobsPage() {
  const query = new URLSearchParams(location.search);
  const filters = { type: query.get("type") || "", status: query.get("status") || "", day: query.get("day") || "" };
  const page = Number(query.get("page") || 1);
  const parameters = new URLSearchParams({ limit: String(LIMIT), page: String(page) });
  for (const [name, value] of Object.entries(filters)) if (value) parameters.set(name, value);
  const listing = await api("GET", `/notifications/jobs?${parameters}`);
  const pagination = listing[JobPage.pagination];
  const jobs = listing[JobPage.data];
  const total = pagination[Pagination.total];
  return h("div", {},
    h("header", { class: "page-head" }, h("h1", {}, "Jobs"),
      h("p", { class: "muted" }, `${total}${pagination[Pagination.totalIsLowerBound] ? "+" : ""} job${total === 1 ? "" : "s"}`)),
    filterForm(filters),
    filters.status === "failed" ? recoverForm(filters.type) : null,
    jobs.length ? jobTable(jobs) : h("p", { class: "empty" }, "No jobs match these filters yet. Send one with the API and it appears here."),
    pager(page, pagination[Pagination.totalPages], filters));
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
      h("td", {}, link(`/console/jobs/${encodeURIComponent(job[JobSummary.id])}`, h("code", {}, job[JobSummary.id].slice(0, 8)), h("span", { class: "visually-hidden" }, ` job ${job[JobSummary.id]}`))),
      h("td", {}, job[JobSummary.type]),
      h("td", {}, badge(job[JobSummary.status])),
      h("td", {}, `${job[JobSummary.attempts]} / ${job[JobSummary.maxAttempts]}`),
      h("td", {}, when(job[JobSummary.createdAt])),
      h("td", { class: "error-text" }, job[JobSummary.errorMessage] || "")))));
}

function pager(page, pages, filters) {
  const at = (number) => {
    const query = new URLSearchParams({ ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)), page: String(number) });
    return `/console/jobs?${query}`;
  };
  return h("nav", { class: "pager", "aria-label": "Pages" },
    page > 1 ? link(at(page - 1), "← Newer") : h("span", {}),
    h("span", { class: "muted" }, `Page ${page} of ${Math.max(1, pages)}`),
    page < pages ? link(at(page + 1), "Older →") : h("span", {}));
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
  const id = job[Job.id];
  const status = job[Job.status];
  const suppressions = job[Job.type] === "email" ? await api("GET", "/account/suppressions") : [];
  const recipient = job[Job.payload]?.[EmailRequest.to]?.toLowerCase();
  const suppression = suppressions.find((entry) => entry[Suppression.email] === recipient);
  return h("div", {},
    h("p", { class: "crumbs" }, link("/console/jobs", "Jobs"), " / ", h("code", {}, id)),
    h("header", { class: "page-head" },
      h("h1", {}, job[Job.type] === "email" ? "Email" : "Webhook", " ", badge(status)),
      status === "failed" ? h("button", {
        type: "button",
        class: "button button-primary",
        onclick: async () => {
          if (await act(() => api("POST", `/notifications/jobs/${encodeURIComponent(id)}/retry`), "Queued again for delivery")) rerender();
        },
      }, "Retry") : null,
      status === "scheduled" ? h("button", {
        type: "button",
        class: "button",
        onclick: async () => {
          if (!confirm("Cancel this scheduled job? It will not be sent.")) return;
          if (await act(() => api("POST", `/notifications/jobs/${encodeURIComponent(id)}/cancel`), "Cancelled: it will not be sent")) rerender();
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

// The payload is the request as accepted: the send bodies' fields.
function requestFacts(job) {
  const payload = job[Job.payload] || {};
  const [sendAt, orderingKey, completedAt] = [job[Job.sendAt], job[Job.orderingKey], job[Job.completedAt]];
  const common = [["Job id", h("code", {}, job[Job.id])], ["Priority", String(job[Job.priority])], ["Attempts", `${job[Job.attempts]} of ${job[Job.maxAttempts]}`],
    ["Accepted", when(job[Job.createdAt])], ["Send at", sendAt ? when(sendAt) : ""],
    ["Ordering key", orderingKey ? h("code", {}, orderingKey) : ""], ["Started", when(job[Job.startedAt])], ["Finished", completedAt ? when(completedAt) : ""],
    ["Error", job[Job.errorMessage]]];
  if (job[Job.type] === "email") {
    const [text, body] = [payload[EmailRequest.text], payload[EmailRequest.body]];
    return h("div", {}, facts([["To", payload[EmailRequest.to]], ["From", payload[EmailRequest.from]], ["Reply to", payload[EmailRequest.replyTo]],
      ["Subject", payload[EmailRequest.subject]], ...common]),
      text ? [h("h3", {}, "Text"), h("pre", { class: "payload" }, text)] : null,
      body ? [h("h3", {}, "HTML (as sent, not rendered)"), h("pre", { class: "payload" }, body)] : null);
  }
  const headers = Object.entries(payload[WebhookRequest.headers] || {});
  return h("div", {}, facts([["URL", payload[WebhookRequest.url]], ["Method", payload[WebhookRequest.method] || "POST"], ...common]),
    headers.length ? [h("h3", {}, "Headers"), h("dl", { class: "facts" }, headers.map(([name, value]) => [h("dt", {}, name), h("dd", {}, h("code", {}, value))]))] : null,
    h("h3", {}, "Payload"), h("pre", { class: "payload" }, JSON.stringify(payload[WebhookRequest.payload], null, 2)));
}

function timeline(job, suppression) {
  const [sendAt, status] = [job[Job.sendAt], job[Job.status]];
  const entries = [{ at: job[Job.createdAt], title: "Accepted", kind: "accepted", body: null }];
  if (sendAt) {
    entries.push({ at: sendAt, title: status === "scheduled" ? "Due to be sent" : "Scheduled time", kind: "accepted", body: null });
  }
  if (status === "cancelled") {
    entries.push({ at: job[Job.completedAt], title: "Cancelled before it was sent", kind: "failed", body: null });
  }
  entries.push(...job[Job.deliveryLogs].map(attempt), ...job[Job.events].map(reported));
  if (suppression) {
    entries.push({ at: suppression[Suppression.createdAt], kind: "suppressed", title: `Recipient suppressed (${suppression[Suppression.reason]})`,
      body: h("p", { class: "muted" }, "Herald will not send to this address again until it is removed. ", link("/console/suppressions", "Suppressions")) });
  }
  entries.sort((one, other) => String(one.at).localeCompare(String(other.at)));
  return h("ol", { class: "timeline" }, entries.map((entry) => h("li", { class: `tl tl-${entry.kind}` },
    h("p", { class: "tl-title" }, entry.title), h("p", { class: "tl-time" }, when(entry.at)), entry.body)));
}

function attempt(log) {
  const delivered = log[DeliveryLog.status] === "success";
  const [error, tries] = [log[DeliveryLog.errorMessage], log[DeliveryLog.providers]];
  return {
    at: log[DeliveryLog.createdAt],
    kind: delivered ? "success" : "failed",
    title: `Attempt ${log[DeliveryLog.attempt]}: ${delivered ? `delivered via ${log[DeliveryLog.usedProvider] || "the endpoint"}` : "failed"}`,
    body: h("div", {},
      error ? h("p", { class: "error-text" }, error) : null,
      tries?.length ? h("ol", { class: "tries" }, tries.map((tried) => h("li", {},
        h("strong", {}, tried[ProviderTry.provider] || "endpoint"), ": ", tried[ProviderTry.outcome] || "",
        tried[ProviderTry.status] ? ` (HTTP ${tried[ProviderTry.status]})` : "",
        tried[ProviderTry.error] ? h("span", { class: "error-text" }, ` — ${tried[ProviderTry.error]}`) : null))) : null),
  };
}

function reported(event) {
  const [type, reason] = [event[DeliveryEvent.type], event[DeliveryEvent.reason]];
  return { at: event[DeliveryEvent.occurredAt], kind: `event-${type}`, title: `${event[DeliveryEvent.provider] || "Provider"} reported: ${type}`,
    body: reason ? h("p", { class: "muted" }, reason) : null };
}
