import { useRef, useState } from 'preact/hooks';
import { CopyButton } from './copy-button';

type Language = 'python' | 'node' | 'curl';

const LANGUAGES: ReadonlyArray<{ id: Language; label: string }> = [
  { id: 'python', label: 'Python' },
  { id: 'node', label: 'Node.js' },
  { id: 'curl', label: 'curl' },
];

/**
 * The OpenAI SDK pointed at this gateway, in three languages. The key is read from the environment
 * (MODELMUX_API_KEY): the spec says a key must never be written into code.
 */
export function snippet(language: Language, baseUrl: string): string {
  switch (language) {
    case 'python':
      return [
        'import os',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${baseUrl}", api_key=os.environ["MODELMUX_API_KEY"])`,
        '',
        'reply = client.chat.completions.create(',
        '    model="gpt-4o-mini",',
        '    messages=[{"role": "user", "content": "Hello!"}],',
        ')',
        'print(reply.choices[0].message.content)',
      ].join('\n');
    case 'node':
      return [
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${baseUrl}', apiKey: process.env.MODELMUX_API_KEY });`,
        '',
        'const reply = await client.chat.completions.create({',
        "  model: 'gpt-4o-mini',",
        "  messages: [{ role: 'user', content: 'Hello!' }],",
        '});',
        'console.log(reply.choices[0].message.content);',
      ].join('\n');
    case 'curl':
      return [
        `curl ${baseUrl}/chat/completions \\`,
        '  -H "Authorization: Bearer $MODELMUX_API_KEY" \\',
        '  -H "Content-Type: application/json" \\',
        `  -d '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello!"}]}'`,
      ].join('\n');
    default:
      return '';
  }
}

/** The quick-start card: base URL, then tabs (arrow keys move between them, WAI-ARIA tabs pattern). */
export function QuickStart({ baseUrl }: { baseUrl: string }) {
  const [language, setLanguage] = useState<Language>('python');
  const tabs = useRef<Array<HTMLButtonElement | null>>([]);
  const onKeyDown = (e: KeyboardEvent, index: number): void => {
    const last = LANGUAGES.length - 1;
    const next =
      e.key === 'ArrowRight'
        ? index === last
          ? 0
          : index + 1
        : e.key === 'ArrowLeft'
          ? index === 0
            ? last
            : index - 1
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? last
              : -1;
    if (next < 0) return;
    e.preventDefault();
    const target = LANGUAGES[next];
    if (target) setLanguage(target.id);
    tabs.current[next]?.focus();
  };
  const code = snippet(language, baseUrl);
  return (
    <section class="card" aria-labelledby="quick-start-title">
      <h2 id="quick-start-title">Quick start</h2>
      <p>Use any OpenAI SDK: set the base URL and an API key. Keep the key in an environment variable, never in code.</p>
      <div class="inline-copy">
        <span class="inline-copy-label" id="base-url-label">
          Base URL
        </span>
        <code class="mono" aria-labelledby="base-url-label">
          {baseUrl}
        </code>
        <CopyButton text={baseUrl} label="Copy URL" />
      </div>
      <div class="tabs" role="tablist" aria-label="Language">
        {LANGUAGES.map((l, i) => (
          <button
            key={l.id}
            ref={(el) => {
              tabs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${l.id}`}
            aria-selected={language === l.id}
            aria-controls="snippet-panel"
            tabIndex={language === l.id ? 0 : -1}
            class="tab"
            onClick={() => setLanguage(l.id)}
            onKeyDown={(e) => onKeyDown(e, i)}
          >
            {l.label}
          </button>
        ))}
      </div>
      <div id="snippet-panel" role="tabpanel" aria-labelledby={`tab-${language}`} class="snippet">
        <pre tabIndex={0} aria-label={`${language} example`}>
          <code>{code}</code>
        </pre>
        <CopyButton text={code} label="Copy code" class="snippet-copy" />
      </div>
    </section>
  );
}
