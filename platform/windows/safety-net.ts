// The Bridge itself in a KILL_ON_JOB_CLOSE job: if the Bridge dies for any reason, Windows closes
// its last handle to this job and kills every process still in it, including every task's tree
// (task jobs nest inside it). The handle is deliberately never closed.
import { JobObject } from "./job.ts";

let safetyNet: JobObject | null = null;

export function enterKillOnCloseJob(): boolean {
  if (safetyNet !== null) return true;
  const job = JobObject.create();
  if (job === null) return false;
  if (!job.assignSelf()) {
    job.close();
    return false;
  }
  safetyNet = job;
  return true;
}
