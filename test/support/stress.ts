// How many times a test repeats a property it proves by repetition (races, random cases). The
// default suite runs a smaller count of each; the stress lane (.ci/run, SERVERFS_STRESS=1, the
// files in .ci/stress-lane.txt) runs the full count. Both prove the same property: only how hard
// they try differs.
export const STRESS = process.env.SERVERFS_STRESS === "1";

export function repetitions(normal: number, stress: number): number {
  return STRESS ? stress : normal;
}
