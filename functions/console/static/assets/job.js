// One job's page: its request as accepted and its timeline (attempts with every provider tried, the
// provider's events, and the suppression that followed). All of it is the tenant's or a recipient's
// text: shown with textContent only (dom.js).
import { api, ApiError } from "./api.js";
import { badge, h, when } from "./dom.js";
import { act, link, rerender } from "./app.js";
import { DeliveryEvent, DeliveryLog, EmailRequest, Job, ProviderTry, Suppression, WebhookRequest } from "./fields.js";

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
