// The gateway's own API (/api/*: the console's calls).
export {};
