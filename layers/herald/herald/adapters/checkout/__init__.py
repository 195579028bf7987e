"""The payment processors' checkout-creation APIs (Polar, Paystack)."""
