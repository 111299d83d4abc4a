#!/usr/bin/env node
// The compiled entry point; `npm ci` builds dist/ through the root `prepare` script.
import '../dist/main.js';
