import { listAgents, setDraining, type AgentView } from '../cluster/agents.js';
import { requestTaskCancel, showTask, type TaskView } from '../tasks/operator.js';
import { need, print, table, type AdminCommand } from './admin-command.js';

export const agentList: AdminCommand = async ({ db, values, json }) => {
  const agents = await listAgents(db, { all: values.all });
  if (json) print(agents, true);
  else process.stdout.write(agentTable(agents));
};

export const agentDrain: AdminCommand = async ({ db, arg, json }) => {
  print(await setDraining(db, need(arg, 'agent id'), true), json);
};

export const agentResume: AdminCommand = async ({ db, arg, json }) => {
  print(await setDraining(db, need(arg, 'agent id'), false), json);
};

export const taskCancel: AdminCommand = async ({ db, arg, json }) => {
  print(await requestTaskCancel(db, need(arg, 'task, job or render id')), json);
};

export const taskShow: AdminCommand = async ({ db, arg, json }) => {
  const family = await showTask(db, need(arg, 'task, job or render id'));
  if (json) print(family, true);
  else process.stdout.write(taskTable([family.task, ...family.children]));
};

function agentTable(agents: AgentView[]): string {
  if (!agents.length) return 'no agents\n';
  const ago = (d: Date) => `${Math.max(0, Math.round((Date.now() - new Date(d).getTime()) / 1000))}s ago`;
  const gb = (b: number | null) => (b == null ? '-' : `${(b / 1e9).toFixed(1)} GB`);
  const rows = [['ID', 'NAME', 'STATE', 'RUNNING', 'FREE DISK', 'LAST SEEN', 'TASK TYPES', 'CAPABILITIES']];
  for (const a of agents) {
    rows.push([
      a.id,
      a.name,
      a.state,
      `${a.runningTasks}/${a.slots}`,
      gb(a.freeDiskBytes),
      ago(a.lastSeenAt),
      a.taskTypes.join(','),
      a.capabilities.join(','),
    ]);
  }
  return table(rows);
}

function taskTable(tasks: TaskView[]): string {
  const rows = [['ID', 'TYPE', 'PART', 'STATE', 'ATTEMPTS', 'PROGRESS', 'STAGE', 'AGENT', 'LAST ERROR']];
  for (const t of tasks) {
    rows.push([
      t.id,
      t.type,
      t.childIndex === null ? '-' : String(t.childIndex + 1),
      t.state,
      String(t.attempts),
      `${Math.round(t.progress * 100)}%`,
      t.stage ?? '-',
      t.agent ?? '-',
      t.lastError ?? '',
    ]);
  }
  return table(rows);
}
