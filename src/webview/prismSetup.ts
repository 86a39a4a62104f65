// Runs before Prism loads: Prism must never highlight the page on its own (it would set innerHTML
// on every `language-*` block); the webview asks it for tokens and builds the nodes itself.
(globalThis as unknown as { Prism?: { manual: boolean; disableWorkerMessageHandler: boolean } }).Prism = { manual: true, disableWorkerMessageHandler: true };

export {};
