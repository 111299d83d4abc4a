// `kbchat doctor`: the checks in order, then the report. Exit status 0 when
// nothing failed (warnings do not fail), 1 otherwise.
import type { Check, Found } from './check.js';
import { datasetChecks, configChecks, gatewayChecks, platformChecks, platformTokenChecks } from './services.js';
import { modelChecks } from './models.js';
import type { DoctorOptions } from './options.js';
import { portChecks } from './ports.js';
import { passed, toJson, toTable } from './report.js';
import { storeChecks } from './stores.js';

export { doctorOptions, type DoctorOptions } from './options.js';

export async function runDoctor(opts: DoctorOptions): Promise<Check[]> {
  const f: Found = { opts };
  const checks: Check[] = [...(await storeChecks(opts)), ...(await portChecks(opts))];
  checks.push(...(await gatewayChecks(f)));
  if (f.gatewayUp) checks.push(...(await platformTokenChecks(f)));
  checks.push(...configChecks(f));
  checks.push(...(await platformChecks(f)));
  checks.push(...(await modelChecks(f)));
  checks.push(...datasetChecks(f));
  return checks;
}

export async function doctorCommand(opts: DoctorOptions, output: { json: boolean; colour: boolean }): Promise<number> {
  const checks = await runDoctor(opts);
  console.log(output.json ? toJson(checks) : toTable(checks, output.colour));
  return passed(checks) ? 0 : 1;
}
