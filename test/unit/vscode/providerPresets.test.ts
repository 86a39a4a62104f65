// The setup picker's presets: each fills a usable base URL, a typed URL is checked before it is
// saved, and a stored URL is recognised as the preset it came from.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseUrlProblem, normalizeBaseUrl, PROVIDER_PRESETS, presetById, presetForUrl, presetUrl } from '../../../src/vscode/setup/providerPresets';

describe('provider presets', () => {
  it('offers the providers the walkthrough names, custom last', () => {
    assert.deepEqual(
      PROVIDER_PRESETS.map((p) => p.label),
      ['OpenAI', 'Azure OpenAI', 'OpenRouter', 'DashScope (Qwen)', 'Ollama', 'LM Studio', 'vLLM', 'llama.cpp server', 'Another OpenAI-compatible endpoint'],
    );
  });

  it('every preset URL is an API root the setup accepts as it is, and is recognised again once stored', () => {
    for (const preset of PROVIDER_PRESETS.filter((p) => p.baseUrl)) {
      const url = presetUrl(preset, 'contoso-openai');
      assert.equal(baseUrlProblem(url), undefined, preset.label);
      assert.equal(normalizeBaseUrl(url), url, `${preset.label}: stored as given`);
      assert.equal(presetForUrl(url)?.id, preset.id, preset.label);
    }
  });

  it('cloud providers need a key, local servers none, self-hosted ones only if started with one', () => {
    const need = Object.fromEntries(PROVIDER_PRESETS.map((p) => [p.id, p.key]));
    assert.deepEqual(need, { openai: 'required', azure: 'required', openrouter: 'required', dashscope: 'required', ollama: 'none', lmstudio: 'none', vllm: 'optional', llamacpp: 'optional', custom: 'optional' });
    for (const preset of PROVIDER_PRESETS.filter((p) => p.key === 'none')) assert.match(preset.baseUrl, /^http:\/\/localhost:\d+\/v1$/);
  });

  it('Azure: the resource name becomes the host, and only a resource name is accepted', () => {
    const azure = presetById('azure')!;
    assert.equal(presetUrl(azure, ' Contoso-OpenAI '), 'https://contoso-openai.openai.azure.com/openai/v1');
    assert.ok(azure.urlPart!.pattern.test('contoso-openai'));
    for (const bad of ['contoso.evil.com/x', 'a b', '', 'x/../y']) assert.ok(!azure.urlPart!.pattern.test(bad), bad);
    assert.equal(presetForUrl('https://evil.example/openai/v1'), undefined);
  });

  it('DashScope also turns on its prefix caching', () => {
    assert.deepEqual(presetById('dashscope')!.settings, { prefixCaching: 'dashscope' });
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8'));
    assert.ok(manifest.contributes.configuration.properties['speculate.prefixCaching'].enum.includes('dashscope'));
  });

  it('a typed URL: must be http(s), no credentials, no query; a trailing slash is dropped', () => {
    assert.match(baseUrlProblem('')!, /Enter the endpoint/);
    assert.match(baseUrlProblem('localhost:11434/v1')!, /http\(s\) URL/);
    assert.match(baseUrlProblem('ftp://example.org/v1')!, /http\(s\) URL/);
    assert.match(baseUrlProblem('https://user:sk-123@example.org/v1')!, /credentials/);
    assert.match(baseUrlProblem('https://example.org/v1?key=sk-1')!, /without \?query/);
    assert.equal(baseUrlProblem('http://127.0.0.1:8000/v1/'), undefined);
    assert.equal(normalizeBaseUrl(' http://127.0.0.1:8000/v1/ '), 'http://127.0.0.1:8000/v1');
  });
});
