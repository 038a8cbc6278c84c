# L2 metrics of the long-K split calls (ncu_splitk.py): which of gh100's lrc / fabric / per-source-unit
# L2 counters ncu knows, then those counters on every profiled kernel. Run on the device from the repo root.
set -x
ncu --query-metrics --chip gh100 > $OUT/metrics-gh100.txt 2>&1 || ncu --query-metrics > $OUT/metrics-gh100.txt 2>&1
grep -i -E '^(lrc__|lts__t_(sectors|requests)_srcunit|lts__t_sectors_srcnode|ltcfabric|lts__ltcfabric)' $OUT/metrics-gh100.txt | awk '{print $1}' | head -40 > $OUT/picked.txt
M=$(sed 's/$/.sum/' $OUT/picked.txt | paste -sd, -)
echo "$M"
ncu --clock-control none --profile-from-start off --metrics "$M,gpu__time_duration.sum,lts__t_bytes.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum" --csv --page raw --log-file $OUT/ncu-l2.csv python3 bench/experiments/ncu_splitk.py > $OUT/order2.txt 2>&1
echo rc=$?
tail -3 $OUT/order2.txt; wc -l $OUT/ncu-l2.csv; head -c 600 $OUT/ncu-l2.csv
