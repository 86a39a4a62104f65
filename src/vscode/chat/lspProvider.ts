// The `lsp` tool answered by the editor's own language features (definition, references, hover,
// workspace symbols), with results as workspace-relative text for the model.
import * as vscode from 'vscode';
import type { LspProvider } from '../../core/tools/types';

function describeLocation(root: vscode.Uri, location: vscode.Location | vscode.LocationLink): string {
  const uri = 'targetUri' in location ? location.targetUri : location.uri;
  const range = 'targetRange' in location ? location.targetRange : location.range;
  const relative = vscode.workspace.asRelativePath(uri, false) || uri.fsPath.replace(root.fsPath, '');
  return `${relative}:${range.start.line + 1}:${range.start.character + 1}`;
}

export class EditorLspProvider implements LspProvider {
  constructor(private readonly root: vscode.Uri) {}

  async query(request: Parameters<LspProvider['query']>[0]): Promise<string> {
    if (request.operation === 'symbols') {
      const symbols = (await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', request.query ?? '')) ?? [];
      if (symbols.length === 0) return `No symbols match "${request.query ?? ''}".`;
      return symbols.slice(0, 100).map((s) => `${vscode.SymbolKind[s.kind]} ${s.name} — ${describeLocation(this.root, s.location)}`).join('\n');
    }
    const uri = vscode.Uri.joinPath(this.root, ...request.path.split('/'));
    const position = new vscode.Position(Math.max(0, (request.line ?? 1) - 1), Math.max(0, (request.character ?? 1) - 1));
    if (request.operation === 'hover') {
      const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, position)) ?? [];
      const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : ''))).filter(Boolean);
      return text.length > 0 ? text.join('\n\n') : 'No hover information at that position.';
    }
    const command = request.operation === 'definition' ? 'vscode.executeDefinitionProvider' : 'vscode.executeReferenceProvider';
    const locations = (await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>(command, uri, position)) ?? [];
    if (locations.length === 0) return `No ${request.operation} found at ${request.path}:${request.line ?? 1}:${request.character ?? 1}.`;
    return locations.slice(0, 200).map((l) => describeLocation(this.root, l)).join('\n');
  }
}
