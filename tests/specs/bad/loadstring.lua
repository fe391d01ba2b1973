return loadstring("os.execute('touch /tmp/kgen_pwned')")()
