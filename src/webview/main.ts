// Entry of the chat webview bundle.
const root = document.getElementById('app');
if (root) root.textContent = 'Speculate';
