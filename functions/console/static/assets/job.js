// One job's page: the sentence that says where it stands, its request as accepted and its timeline
// (attempts with every provider tried or the webhook's request and response, the provider's events,
// and the suppression that followed). All of it is the tenant's, a recipient's or a receiver's text:
// shown with textContent only (dom.js).
import { api, ApiError } from "./api.js";
import { badge, facts, h, when } from "./dom.js";
import { act, link, rerender } from "./app.js";
import {
  DeliveryEvent, DeliveryLog, EmailRequest, Job, JobAttachment, ProviderTry, ReceivedResponse, SentRequest, SupportedProvider, Suppression,
  WebhookRequest,
} from "./fields.js";

// The providers' labels (GET /providers: the vendor table), asked once per page load; a name the
// table does not list (the platform's SES) shows as it is.
let labels = null;

function providerLabels() {
  labels ??= api("GET", "/providers").then((list) =>
    Object.fromEntries(list.map((vendor) => [vendor[SupportedProvider.provider], vendor[SupportedProvider.label]])))
    .catch((error) => {
      labels = null;
      throw error;
    });
  return labels;
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
  const [suppressions, names] = await Promise.all([
    job[Job.type] === "email" ? api("GET", "/account/suppressions") : [], providerLabels()]);
  const label = (name) => names[name] || name;
  const recipient = job[Job.payload]?.[EmailRequest.to]?.toLowerCase();
  const suppression = suppressions.find((entry) => entry[Suppression.email] === recipient);
  return h("div", {},
    h("p", { class: "crumbs" }, link("/console/jobs", "Jobs"), " / ", h("code", {}, id)),
    h("header", { class: "page-head" },
      h("h1", {}, job[Job.type] === "email" ? "Email" : "Webhook", " ", badge(status)),
      job[Job.retryable] ? h("button", {
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
    h("p", { class: `status-detail status-detail-${status}`, "data-status-detail": "" }, job[Job.statusDetail]),
    h("div", { class: "columns" },
      h("section", { class: "card", "aria-labelledby": "request-title" }, h("h2", { id: "request-title" }, "Request"), requestFacts(job)),
      h("section", { class: "card", "aria-labelledby": "timeline-title" }, h("h2", { id: "timeline-title" }, "Timeline"), timeline(job, suppression, label))));
}

// The attempts as a sentence: "2 / 4" left people guessing which number was which.
function attemptsInWords(job) {
  const [made, most, status] = [job[Job.attempts], job[Job.maxAttempts], job[Job.status]];
  const attempts = (count) => `${count} ${count === 1 ? "attempt" : "attempts"}`;
  if (status === "completed") return made === 1 ? "Delivered on the first attempt" : `Delivered on attempt ${made}, after ${attempts(made - 1)} that failed`;
  if (status === "failed") return `${attempts(made)} made, none delivered`;
  if (status === "scheduled" || status === "cancelled") return "None: it was not sent";
  return made === 0 ? `None yet; up to ${most}` : `${attempts(made)} made so far; up to ${most - made} more`;
}

// The payload is the request as accepted: the send bodies' fields.
function requestFacts(job) {
  const payload = job[Job.payload] || {};
  const [sendAt, orderingKey, completedAt] = [job[Job.sendAt], job[Job.orderingKey], job[Job.completedAt]];
  const common = [["Job id", h("code", {}, job[Job.id])], ["Priority", String(job[Job.priority])], ["Attempts", attemptsInWords(job)],
    ["Accepted", when(job[Job.createdAt])], ["Send at", sendAt ? when(sendAt) : ""],
    ["Ordering key", orderingKey ? h("code", {}, orderingKey) : ""], ["Started", when(job[Job.startedAt])], ["Finished", completedAt ? when(completedAt) : ""],
    ["Error", job[Job.errorMessage]]];
  if (job[Job.type] === "email") {
    const [text, body] = [payload[EmailRequest.text], payload[EmailRequest.body]];
    return h("div", {}, facts([["To", payload[EmailRequest.to]], ["From", payload[EmailRequest.from]], ["Reply to", payload[EmailRequest.replyTo]],
      ["Subject", payload[EmailRequest.subject]], ...common]),
      attachmentList(job[Job.attachments] || []),
      text ? [h("h3", {}, "Text"), h("pre", { class: "payload" }, text)] : null,
      body ? [h("h3", {}, "HTML (as sent, not rendered)"), h("pre", { class: "payload" }, body)] : null);
  }
  const headers = Object.entries(payload[WebhookRequest.headers] || {});
  return h("div", {}, facts([["URL", payload[WebhookRequest.url]], ["Method", payload[WebhookRequest.method] || "POST"], ...common]),
    headers.length ? [h("h3", {}, "Headers"), h("dl", { class: "facts" }, headers.map(([name, value]) => [h("dt", {}, name), h("dd", {}, h("code", {}, value))]))] : null,
    h("h3", {}, "Payload"), h("pre", { class: "payload" }, JSON.stringify(payload[WebhookRequest.payload], null, 2)));
}

// The files the email carries, by name, type and size (their content is never shown again).
function attachmentList(files) {
  if (!files.length) return null;
  const size = (bytes) => (bytes < 1000 ? `${bytes} bytes` : bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`);
  return [h("h3", {}, "Attachments"), h("ul", { class: "attachments", "data-attachments": "" }, files.map((file) =>
    h("li", {}, h("code", {}, file[JobAttachment.filename]), ` ${file[JobAttachment.contentType]}, ${size(file[JobAttachment.size])}`)))];
}

// Entries in the order things happened: by time, and for equal times in the order they are pushed
// here (Array.prototype.sort is stable), which is the order they happen in.
function timeline(job, suppression, label) {
  const [sendAt, status, createdAt] = [job[Job.sendAt], job[Job.status], job[Job.createdAt]];
  const entries = [{ at: createdAt, title: "Accepted", kind: "accepted", body: null }];
  if (sendAt && (status === "scheduled" || status === "cancelled")) {
    // Scheduling happened at acceptance; the time it names has not come (or never will).
    entries.push({ at: createdAt, title: `Scheduled for ${when(sendAt)}`, kind: "accepted", body: null });
  } else if (sendAt) {
    entries.push({ at: sendAt, title: "Scheduled time reached", kind: "accepted", body: null });
  }
  if (status === "cancelled") {
    entries.push({ at: job[Job.completedAt], title: "Cancelled before it was sent", kind: "failed", body: null });
  }
  entries.push(...job[Job.deliveryLogs].map((log) => attempt(log, label)), ...job[Job.events].map((event) => reported(event, label)));
  if (suppression) {
    entries.push({ at: suppression[Suppression.createdAt], kind: "suppressed", title: `Recipient suppressed (${suppression[Suppression.reason]})`,
      body: h("p", { class: "muted" }, "Herald will not send to this address again until it is removed. ", link("/console/suppressions", "Suppressions")) });
  }
  entries.sort((one, other) => Date.parse(one.at) - Date.parse(other.at));
  return h("ol", { class: "timeline" }, entries.map((entry) => h("li", { class: `tl tl-${entry.kind}` },
    h("p", { class: "tl-title" }, entry.title), h("p", { class: "tl-time" }, when(entry.at)), entry.body)));
}

const OUTCOMES = {
  delivered: "delivered",
  transient: "failed for now",
  provider_permanent: "refused the key or account",
  message_permanent: "refused the message",
  "moved back": "moved back: its breaker is open",
};

function attempt(log, label) {
  const delivered = log[DeliveryLog.status] === "success";
  const [error, tries, response] = [log[DeliveryLog.errorMessage], log[DeliveryLog.providers], log[DeliveryLog.response]];
  const answered = response?.[ReceivedResponse.status] ? ` (HTTP ${response[ReceivedResponse.status]})` : "";
  const via = log[DeliveryLog.usedProvider] ? ` via ${label(log[DeliveryLog.usedProvider])}` : "";
  // An email's failure in the words of its last provider, named by its label (the stored message
  // names it in capitals, with the failure's kind).
  const failedTry = [...(tries || [])].reverse().find((tried) => tried[ProviderTry.error]);
  const failedStatus = failedTry?.[ProviderTry.status] ? ` (HTTP ${failedTry[ProviderTry.status]})` : "";
  const reason = failedTry ? `${label(failedTry[ProviderTry.provider])}: ${failedTry[ProviderTry.error]}${failedStatus}` : error;
  return {
    at: log[DeliveryLog.createdAt],
    kind: delivered ? "success" : "failed",
    title: `Attempt ${log[DeliveryLog.attempt]}: ${delivered ? `delivered${via}` : "failed"}${answered}`,
    body: h("div", {},
      reason ? h("p", { class: "error-text" }, reason) : null,
      tries?.length ? providersTried(tries, label) : null,
      log[DeliveryLog.request] ? exchange(log[DeliveryLog.request], response) : null),
  };
}

function milliseconds(value) {
  return value === undefined || value === null ? "" : `${value} ms`;
}

function providersTried(tries, label) {
  return h("details", { class: "attempt-detail" },
    h("summary", {}, tries.length === 1 ? "1 provider tried" : `${tries.length} providers tried`),
    h("ol", { class: "tries" }, tries.map((tried) => h("li", {},
      h("strong", {}, label(tried[ProviderTry.provider])), ": ", OUTCOMES[tried[ProviderTry.outcome]] || tried[ProviderTry.outcome],
      facts([["HTTP status", tried[ProviderTry.status] ? String(tried[ProviderTry.status]) : ""], ["Latency", milliseconds(tried[ProviderTry.latencyMs])],
        ["Message id", tried[ProviderTry.providerMessageId] ? h("code", {}, tried[ProviderTry.providerMessageId]) : ""],
        ["Error", tried[ProviderTry.error] ? h("span", { class: "error-text" }, tried[ProviderTry.error]) : ""]])))));
}

function headerList(headers) {
  const entries = Object.entries(headers || {});
  return entries.length ? h("dl", { class: "facts headers" }, entries.map(([name, value]) => [h("dt", {}, name), h("dd", {}, h("code", {}, value))])) : h("p", { class: "muted" }, "None");
}

// What a webhook attempt sent and got back; the excerpt is the receiver's text, shown as text.
function exchange(request, response) {
  const status = response?.[ReceivedResponse.status];
  const excerpt = response?.[ReceivedResponse.bodyExcerpt];
  return h("details", { class: "attempt-detail" },
    h("summary", {}, "Request and response"),
    h("h4", {}, "Request"),
    facts([["Sent", h("code", {}, `${request[SentRequest.method]} ${request[SentRequest.url]}`)], ["Body", `${request[SentRequest.bodyBytes]} bytes`]]),
    headerList(request[SentRequest.headers]),
    h("h4", {}, "Response"),
    facts([["Status", status ? `HTTP ${status}` : "no answer"], ["Latency", milliseconds(response?.[ReceivedResponse.latencyMs])]]),
    status ? headerList(response[ReceivedResponse.headers]) : null,
    excerpt ? h("pre", { class: "excerpt" }, excerpt) : null);
}

// An event where Herald received it: a provider's own time may be any time, so it is shown apart.
function reported(event, label) {
  const [type, reason, received] = [event[DeliveryEvent.type], event[DeliveryEvent.reason], event[DeliveryEvent.receivedAt]];
  const provider = event[DeliveryEvent.provider];
  const claimed = event[DeliveryEvent.occurredAt];
  return { at: received || claimed, kind: `event-${type}`, title: `${provider ? label(provider) : "Provider"} reported: ${type}`,
    body: h("div", {}, reason ? h("p", { class: "muted" }, reason) : null,
      received && claimed !== received ? h("p", { class: "muted" }, `The provider dates it ${when(claimed)}.`) : null) };
}
