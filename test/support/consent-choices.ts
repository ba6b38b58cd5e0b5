/**
 * What a browser sends with the consent form as the page shows it: the page's choice marker
 * and every permission ticked by default (none on a page that offers no choices). A script
 * approving on a person's behalf sends these, as the page's own form does: an approval
 * without the marker is refused.
 */
export function consentChoices(html: string): [string, string][] {
  const choices: [string, string][] = []
  if (/name="grant_choices"/.test(html)) choices.push(['grant_choices', '1'])
  for (const match of html.matchAll(/name="grant" value="([^"]+)" checked/g)) {
    choices.push(['grant', match[1] ?? ''])
  }
  return choices
}
