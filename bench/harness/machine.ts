import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

/** Where and when a run happened. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGb: number;
  node: string;
  platform: string;
  date: string;
  commit: string;
  /** Uncommitted changes in the tree when the run started. */
  dirty: boolean;
  /** 1-minute load average at the start (other jobs on a shared machine). */
  load1: number;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return '';
  }
}

/** Reads the machine, Node version, date and git commit. */
export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown',
    dirty: git(['status', '--porcelain', '--untracked-files=no']).length > 0,
    load1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

/**
 * CPU µs process `pid` has run, all its threads, from
 * `/proc/<pid>/task/<tid>/schedstat` (ns; `/proc/<pid>/stat` counts 10 ms
 * ticks, too coarse for short rounds). Threads that exit between listing and
 * reading count as 0.
 */
export function processCpuUs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended.
    }
  }
  return ns / 1000;
}
