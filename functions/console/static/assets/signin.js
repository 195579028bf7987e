// Sign-up and sign-in without a password: an emailed six-digit code.
import { api, ApiError } from "./api.js";
import { field, h, replace, secretOnce } from "./dom.js";
import { SignInRequest, SignUpRequest, SignedIn, VerifyCodeRequest } from "./fields.js";

export function signInPage(mode, onSignedIn) {
  const card = h("section", { class: "card signin", "aria-labelledby": "signin-title" });
  askForCode(card, mode, onSignedIn, "");
  return h("div", { class: "signin-wrap" },
    h("div", { class: "brand brand-large" }, h("span", { class: "brand-mark", "aria-hidden": "true" }, "H"), "Herald"),
    card);
}

function message(element, text, kind = "error") {
  replace(element, text ? h("p", { class: `message message-${kind}`, role: kind === "error" ? "alert" : "status" }, text) : null);
}

// A form whose submission calls the API: one request at a time, its error shown in the form.
function apiForm(submit, status, fallback, work, ...fields) {
  return h("form", {
    novalidate: true,
    onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        await work();
      } catch (error) {
        message(status, error instanceof ApiError ? error.message : fallback);
        submit.disabled = false;
      }
    },
  }, ...fields, status, submit);
}

// The first step; ``typed``: the address to offer again ("Use another email"), which also means
// the person is here already, so the address field takes the focus.
function askForCode(card, mode, onSignedIn, typed) {
  const signup = mode === "signup";
  const email = h("input", { type: "email", name: "email", autocomplete: "email", required: true, value: typed });
  const name = h("input", { type: "text", name: "name", autocomplete: "organization", required: true, maxlength: 100 });
  const status = h("div", {});
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Email me a code");
  const form = apiForm(submit, status, "The code could not be requested.", async () => {
    const body = signup
      ? { [SignUpRequest.email]: email.value.trim(), [SignUpRequest.name]: name.value.trim() }
      : { [SignInRequest.email]: email.value.trim() };
    const requestCode = () => api("POST", signup ? "/signup" : "/signin", body);
    await requestCode();
    enterCode(card, email.value.trim(), onSignedIn, { mode, requestCode });
  },
  field("Work email", email),
  signup ? field("Account name", name, "Your team or product, as your invoices will show it.") : null);
  replace(card,
    h("h1", { id: "signin-title" }, signup ? "Create your Herald account" : "Sign in to Herald"),
    h("p", { class: "muted" }, signup
      ? "Free plan: 100 emails and webhooks a month through Herald's own sender. No card, no password."
      : "We email you a code; no password to remember."),
    form,
    h("p", { class: "switch" }, signup ? "Already have an account? " : "New to Herald? ",
      h("a", { href: signup ? "/console/signin" : "/console/signup", "data-route": "" }, signup ? "Sign in" : "Create an account")));
  // On a fresh page the focus stays where the browser put it (the first Tab reaches "Skip to
  // content"); coming back from the code step, it goes where the person will type.
  if (typed) email.focus();
}

// ``again``: how the code was asked for, to ask for a new one, and the mode to start over in.
function enterCode(card, email, onSignedIn, again) {
  const code = h("input", {
    type: "text", name: "code", inputmode: "numeric", autocomplete: "one-time-code", pattern: "[0-9]{6}",
    maxlength: 6, required: true, class: "code-input",
  });
  const status = h("div", {});
  const submit = h("button", { type: "submit", class: "button button-primary" }, "Continue");
  const form = apiForm(submit, status, "The code could not be checked.", async () => {
    try {
      const signedIn = await api("POST", "/signin/verify", { [VerifyCodeRequest.email]: email, [VerifyCodeRequest.code]: code.value.trim() });
      const apiKey = signedIn[SignedIn.apiKey];
      if (apiKey) return showFirstKey(card, apiKey, onSignedIn);
      return onSignedIn();
    } catch (error) {
      code.select();
      throw error;
    }
  }, field("Six-digit code", code, "It works once, for 10 minutes."));
  const resend = h("button", {
    type: "button", class: "button button-quiet",
    onclick: async () => {
      resend.disabled = true;
      try {
        await again.requestCode();
        message(status, "A new code is on its way; earlier codes no longer work.", "success");
        code.value = "";
        submit.disabled = false;
        code.focus();
      } catch (error) {
        message(status, error instanceof ApiError ? error.message : "A new code could not be requested.");
      } finally {
        resend.disabled = false;
      }
    },
  }, "Send a new code");
  const restart = h("button", {
    type: "button", class: "button button-quiet", onclick: () => askForCode(card, again.mode, onSignedIn, email),
  }, "Use another email");
  replace(card,
    h("h1", { id: "signin-title" }, "Check your email"),
    h("p", { class: "muted" }, "If ", h("strong", {}, email), " can receive mail, a code is on its way."),
    form,
    h("div", { class: "actions switch" }, resend, restart));
  code.focus();
}

function showFirstKey(card, apiKey, onSignedIn) {
  const next = h("button", { type: "button", class: "button button-primary", onclick: onSignedIn }, "Go to the console");
  replace(card,
    h("h1", { id: "signin-title" }, "Your account is ready"),
    secretOnce("Your API key", apiKey, "Shown this once. Store it in your secrets manager; Herald keeps only its hash."),
    next);
  next.focus();
}
