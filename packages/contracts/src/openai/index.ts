// The OpenAI- and Anthropic-style requests the gateway relays.
export {};
