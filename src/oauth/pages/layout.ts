import { escapeHtml } from '../../core/http/html.ts'

export { escapeHtml }

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f4f5;color:#18181b}
main{max-width:28rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 1rem}
p{margin:.5rem 0}
ul{padding-left:1.25rem}
code,.code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=text]{width:100%;padding:.6rem;font-size:1.25rem;letter-spacing:.15em;text-transform:uppercase;border:1px solid #a1a1aa;border-radius:.375rem}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{flex:1;padding:.7rem 1rem;font-size:1rem;border-radius:.375rem;border:1px solid #3f3f46;background:#fff;color:#18181b;cursor:pointer}
button.primary{background:#1d4ed8;border-color:#1d4ed8;color:#fff}
button:focus-visible,input:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.muted{color:#52525b;font-size:.9rem}
.error{color:#b91c1c}
label.choice{display:inline;font-weight:400;margin:0 .5rem 0 0}
h2{font-size:1.1rem;margin:0 0 .25rem}
.apps{list-style:none;padding:0}
.apps>li{border-top:1px solid #e4e4e7;padding:1rem 0}
th{text-align:left;padding-right:1rem;vertical-align:top}
h3{font-size:1rem;margin:.75rem 0 .25rem}
table.activity{width:100%;border-collapse:collapse;font-size:.85rem}
table.activity th,table.activity td{text-align:left;padding:.2rem .4rem .2rem 0;vertical-align:top;border-bottom:1px solid #f4f4f5}
table.activity td.when{white-space:nowrap}
`

/** The page shell shared by consent, device and error pages: inline CSS, no scripts. */
export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}
